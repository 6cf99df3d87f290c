// Replays of hand-built graphs against exact timelines: pipeline bubbles, overlap, straggler stalls, the ring
// all-reduce closed form, deadlock reports, and byte-identical outputs.
#include <catch2/catch.hpp>

#include "sim/analysis.h"
#include "tests/sim/replay_fixture.h"

using namespace clustersim;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using engine::Time;
using testing::GraphBuilder;
using traces::OpKind;

namespace {
/// GPipe by hand: stage s runs forwards of micro-batches 0..m-1, then backwards 0..m-1; activations and
/// gradients are 0-byte send/recv on their own streams.
traces::OpGraph gpipe(std::uint32_t p, std::uint32_t m, Time fwd, Time bwd) {
    GraphBuilder b(p);
    for (std::uint32_t s = 0; s < p; ++s) {
        for (std::uint32_t i = 0; i < m; ++i) {
            std::vector<traces::OpId> deps;
            if (s > 0) deps.push_back(b.p2p(OpKind::recv, s, s - 1, "recv", 0));
            const auto f = b.compute(s, "compute", fwd, deps);
            if (s + 1 < p) b.p2p(OpKind::send, s, s + 1, "send", 0, {f});
        }
        for (std::uint32_t i = 0; i < m; ++i) {
            std::vector<traces::OpId> deps;
            if (s + 1 < p) deps.push_back(b.p2p(OpKind::recv, s, s + 1, "recv", 0));
            const auto bw = b.compute(s, "compute", bwd, deps);
            if (s > 0) b.p2p(OpKind::send, s, s - 1, "send", 0, {bw});
        }
    }
    return b.g;
}
}  // namespace

TEST_CASE("a GPipe pipeline with free communication has bubble fraction (p-1)/(m+p-1)", "[sim][replay]") {
    // p = 4, m = 6, forward 10 us, backward 20 us: makespan (m+p-1)(tf+tb) = 9 x 30 = 270 us; every stage
    // computes m(tf+tb) = 180 us and waits (p-1)(tf+tb) = 90 us: 90/270 = 3/9 = (p-1)/(m+p-1).
    const auto g = gpipe(4, 6, 10us, 20us);
    traces::validate(g);
    const auto cluster = testing::ring_cluster(4, "100 GB/s", "0 ns");
    const auto result = sim::replay(g, cluster, testing::exact_options());
    REQUIRE(result.timeline.makespan == 270us);
    const auto summary = sim::summarize_run(g, result.timeline);
    for (const auto& r : summary.ranks) {
        INFO("rank " << r.rank);
        REQUIRE(r.compute == 180us);
        REQUIRE(r.dependency_wait + r.finished_early == 90us);
        REQUIRE(r.idle_other == Time{0});
        REQUIRE(r.peer_wait == Time{0});
    }
    // The last stage starts after (p-1) forwards and finishes (p-1) backwards before the end.
    REQUIRE(summary.ranks[3].dependency_wait == 30us);
    REQUIRE(summary.ranks[3].finished_early == 60us);
    REQUIRE(summary.ranks[0].dependency_wait == 90us);
}

TEST_CASE("the per-rank breakdown counts time from 0 and names a span past its range", "[sim][analysis]") {
    // A measured timeline whose first kernel began 5 us before the iteration's start: only [0, 4) of it counts.
    GraphBuilder b(1);
    b.compute(0, "a", 9us);
    b.compute(0, "b", 4us);
    traces::Timeline tl;
    tl.append({Time{-5'000'000}, 4us});
    tl.append({6us, 10us});
    tl.makespan = 10us;
    const auto summary = sim::summarize_run(b.g, tl);
    REQUIRE(summary.ranks.size() == 1);
    CHECK(summary.ranks[0].compute == 8us);
    CHECK(summary.ranks[0].idle_other == 2us);
    CHECK(summary.ranks[0].finished_early == Time{0});
    // An end past 2^59 ps (6.7 days) does not fit the sweep's keys: a located error, not a wrong sum.
    tl.ends[1] = Time{std::int64_t{1} << 60};
    tl.makespan = tl.ends[1];
    REQUIRE_THROWS_WITH(sim::summarize_run(b.g, tl),
                        Catch::Contains("rank 0: a span ends at") && Catch::Contains("past what the analysis takes"));
}

TEST_CASE("the per-rank breakdowns are the same on any number of threads, and so is the error", "[sim][analysis]") {
    // 300 ranks of two kernels each at rank-dependent times: one thread and five give the same summary.
    GraphBuilder b(300);
    traces::Timeline tl;
    for (std::uint32_t r = 0; r < 300; ++r) {
        b.compute(r, "a", 1us);
        b.compute(r, "b", 1us);
        const Time t0{std::int64_t{r} * 1'000'000};
        tl.append({t0, t0 + 2us});
        tl.append({t0 + 3us, t0 + 4us + Time{r}});
        tl.makespan = std::max(tl.makespan, tl.ends.back());
    }
    const auto one = sim::summarize_run(b.g, tl, 1), five = sim::summarize_run(b.g, tl, 5);
    REQUIRE(one.ranks.size() == 300);
    CHECK(one.ranks == five.ranks);
    CHECK(one.ranks[299].compute == 3us + Time{299});
    // Two ranks out of range: the lowest is named, whichever thread met it first.
    tl.ends[2 * 250 + 1] = Time{std::int64_t{1} << 60};
    tl.ends[2 * 101 + 1] = Time{std::int64_t{1} << 60};
    for (const unsigned threads : {1U, 5U})
        REQUIRE_THROWS_WITH(sim::summarize_run(b.g, tl, threads), Catch::Contains("rank 101: a span ends at"));
}

TEST_CASE("ring all-reduce on an uncontended ring takes 2(n-1)(alpha + S/(nB))", "[sim][replay][collectives]") {
    // n = 4 GPUs on a ring of 50 GB/s links with 1 us latency; S = 4 MB: 6 steps of 1 us + 1e6 B / 50e9 B/s
    // = 21 us each: 126 us.
    GraphBuilder b(4);
    for (std::uint32_t r = 0; r < 4; ++r) b.collective(r, "comm", "world", {0, 1, 2, 3}, 4'000'000);
    const auto result = sim::replay(b.g, testing::ring_cluster(4, "50 GB/s", "1 us"), testing::exact_options());
    REQUIRE(result.timeline.makespan == 126us);
    // Bytes: 2(n-1) steps x n flows x S/n = 2 x 3 x 4 MB.
    REQUIRE(result.bytes_on_network == 24'000'000);
}

TEST_CASE("compute overlapping an all-reduce counts as overlap and the rest as exposed communication",
          "[sim][replay]") {
    // 2 GPUs, one 50 GB/s cable, 1 us: all-reduce of 2 MB = 2 steps x (1 us + 1 MB / 50 GB/s) = 42 us, from 0.
    // Compute of 30 us on another stream from 0: overlap 30 us, exposed communication 12 us.
    GraphBuilder b(2);
    for (std::uint32_t r = 0; r < 2; ++r) {
        b.compute(r, "compute", 30us);
        b.collective(r, "comm", "world", {0, 1}, 2'000'000);
    }
    const auto result = sim::replay(b.g, testing::ring_cluster(2, "50 GB/s", "1 us"), testing::exact_options());
    const auto summary = sim::summarize_run(b.g, result.timeline);
    REQUIRE(summary.makespan == 42us);
    for (const auto& r : summary.ranks) {
        REQUIRE(r.compute == 30us);
        REQUIRE(r.communication == 42us);
        REQUIRE(r.overlap == 30us);
        REQUIRE(r.exposed_communication == 12us);
        REQUIRE(r.network_wait == Time{0});
    }
}

TEST_CASE("compute slows down while a communication kernel is resident", "[sim][replay]") {
    // Same as above with a 25% slowdown: 30 us of work at speed 1/1.25 while the all-reduce runs (42 us):
    // it finishes at 37.5 us.
    GraphBuilder b(2);
    for (std::uint32_t r = 0; r < 2; ++r) {
        b.compute(r, "compute", 30us);
        b.collective(r, "comm", "world", {0, 1}, 2'000'000);
    }
    auto options = testing::exact_options();
    options.compute.slowdown_during_comm = 0.25;
    const auto result = sim::replay(b.g, testing::ring_cluster(2, "50 GB/s", "1 us"), options);
    REQUIRE(result.timeline.ends[0] == Time{37'500'000});
}

TEST_CASE("a straggler's delay shows as peer wait on the other ranks", "[sim][replay]") {
    // 2 ranks: rank 1 computes 50 us, rank 0 10 us, then a ring all-reduce of 2 MB (2 steps of 1 us + 1 MB /
    // 50 GB/s = 21 us). Both transfers of step 0 need both ranks, so rank 0 waits 40 us inside the call.
    GraphBuilder b(2);
    for (std::uint32_t r = 0; r < 2; ++r) {
        const auto c = b.compute(r, "compute", r == 1 ? 50us : 10us);
        b.collective(r, "compute", "world", {0, 1}, 2'000'000, traces::CollectiveKind::all_reduce, {c});
    }
    const auto result = sim::replay(b.g, testing::ring_cluster(2, "50 GB/s", "1 us"), testing::exact_options());
    const auto summary = sim::summarize_run(b.g, result.timeline);
    REQUIRE(summary.makespan == 92us);
    REQUIRE(summary.ranks[0].peer_wait == 40us);
    REQUIRE(summary.ranks[1].peer_wait == Time{0});
    REQUIRE(summary.ranks[0].exposed_communication == 42us);
    // The critical path runs through the straggler's compute, then the all-reduce.
    REQUIRE(summary.critical_path.compute == 50us);
    REQUIRE(summary.critical_path.communication == 42us);
    REQUIRE(b.g.rank_of(b.g.ops[summary.critical_path.steps.front().op.index()]).value == 1);
}

TEST_CASE("in a ring, a late rank delays the others only as far as the ring's dependencies carry it", "[sim][replay]") {
    // 4 ranks on a 4-GPU ring, rank 2 arrives at 50 us, the others at 10 us; all-reduce of 4 MB: 6 steps of
    // 21 us. A send waits for the piece it forwards and for its previous send on the same edge to have left
    // (1 us before it arrives: sends on an edge overlap their latency, as in NCCL). Rank 2's first
    // send starts the chain that ends the call: 50 + 6 x 21 = 176 us. Meanwhile the transfers between ranks that
    // have arrived run: rank 0 sends (10-31, 31-52) and receives from 3 (10-31), then idles until 3 forwards
    // rank 2's piece (71): 19 us. Rank 3 sends to 0 (10-31) and idles until rank 2 sends (50): 19 us. Rank 1
    // receives from 0 (10-31, 31-52) and sends to 2 from 50: never idle.
    GraphBuilder b(4);
    for (std::uint32_t r = 0; r < 4; ++r) {
        const auto c = b.compute(r, "compute", r == 2 ? 50us : 10us);
        b.collective(r, "compute", "world", {0, 1, 2, 3}, 4'000'000, traces::CollectiveKind::all_reduce, {c});
    }
    const auto result = sim::replay(b.g, testing::ring_cluster(4, "50 GB/s", "1 us"), testing::exact_options());
    const auto summary = sim::summarize_run(b.g, result.timeline);
    REQUIRE(summary.makespan == 176us);
    REQUIRE(summary.ranks[2].peer_wait == Time{0});
    REQUIRE(summary.ranks[2].exposed_communication == 126us);
    REQUIRE(summary.ranks[0].peer_wait == 19us);
    REQUIRE(summary.ranks[1].peer_wait == Time{0});
    // Rank 1's last transfers end at 175 us: its sends to 2 ran one latency ahead of the chain above.
    REQUIRE(summary.ranks[1].finished_early == 1us);
    // Waiting for the late rank is not network contention: each link carries one transfer at a time.
    for (const auto& r : summary.ranks) REQUIRE(r.network_wait == Time{0});
    REQUIRE(summary.ranks[3].peer_wait == 19us);
    for (const std::uint32_t r : {0U, 1U, 3U}) {
        // Every instant after its compute is waiting, transferring, or done.
        REQUIRE(summary.ranks[r].peer_wait + summary.ranks[r].exposed_communication + summary.ranks[r].finished_early ==
                166us);
    }
}

TEST_CASE("a deadlock names what each blocked rank waits for", "[sim][replay][input]") {
    SECTION("two ranks that both receive first") {
        GraphBuilder b(2);
        b.p2p(OpKind::recv, 0, 1, "s", 8);
        b.p2p(OpKind::send, 0, 1, "s", 8);
        b.p2p(OpKind::recv, 1, 0, "s", 8);
        b.p2p(OpKind::send, 1, 0, "s", 8);
        REQUIRE_THROWS_WITH(sim::replay(b.g, testing::ring_cluster(2, "50 GB/s", "1 us"), testing::exact_options()),
                            Contains("deadlock: 4 of 4 ops never ran: rank 0 waits in recv from rank 1 ('recv'); rank "
                                     "1 waits in recv from rank 0"));
    }
    SECTION("collectives issued in different orders") {
        GraphBuilder b(2);
        b.collective(0, "s", "A", {0, 1}, 8);
        b.collective(0, "s", "B", {0, 1}, 8);
        b.collective(1, "s", "B", {0, 1}, 8);
        b.collective(1, "s", "A", {0, 1}, 8);
        REQUIRE_THROWS_WITH(
            sim::replay(b.g, testing::ring_cluster(2, "50 GB/s", "1 us"), testing::exact_options()),
            Contains(
                "rank 0 waits in all_reduce #0 on 'A' for rank 1; rank 1 waits in all_reduce #0 on 'B' for rank 0"));
    }
}

TEST_CASE("a trace with more ranks than the topology has GPUs is rejected", "[sim][replay][input]") {
    GraphBuilder b(3);
    for (std::uint32_t r = 0; r < 3; ++r) b.compute(r, "compute", 1us);
    REQUIRE_THROWS_WITH(sim::replay(b.g, testing::ring_cluster(2, "50 GB/s", "1 us"), testing::exact_options()),
                        Contains("the trace has 3 ranks but the topology") && Contains("has only 2 GPUs"));
}

TEST_CASE("a stream's next op 65,535 ops or more ahead runs after it, as a near one does", "[sim][replay]") {
    // Stream a: an op, then another after 70,000 ops of stream b (the run state keeps the gap to a stream's next op
    // in 2 bytes, and a farther one apart). Exact times: a's second op starts as its first ends.
    const auto cluster = testing::ring_cluster(2, "50 GB/s", "1 us");
    for (const std::uint32_t between : {65'533U, 65'534U, 65'535U, 70'000U}) {
        INFO(between << " ops between");
        GraphBuilder b(1);
        const traces::OpId first = b.compute(0, "a", 1us);
        for (std::uint32_t k = 0; k < between; ++k) b.compute(0, "b", Time{1});
        const traces::OpId second = b.compute(0, "a", 1us);
        const auto tl = sim::replay(b.g, cluster, testing::exact_options()).timeline;
        REQUIRE(tl.critical_pred(second) == first);
        REQUIRE(tl.start(second) == 1us);
        REQUIRE(tl.end(second) == 2us);
        REQUIRE(tl.end(traces::OpId{between}) == Time{between});
        REQUIRE(tl.makespan == 2us);
    }
}

TEST_CASE("the per-rank breakdown counts a rank's ops however far apart they are listed", "[sim][analysis]") {
    // Rank 0's two kernels with 70,000 of rank 1's between them: the analysis keeps each rank's list of ops as gaps
    // of 2 bytes, and a gap of 65,535 or more apart. Rank 0 computes 2 us in all, rank 1 70,000 ps.
    const auto cluster = testing::ring_cluster(2, "50 GB/s", "1 us");
    for (const std::uint32_t between : {65'533U, 65'534U, 70'000U}) {
        INFO(between << " ops between");
        GraphBuilder b(2);
        b.compute(0, "a", 1us);
        for (std::uint32_t k = 0; k < between; ++k) b.compute(1, "b", Time{1});
        b.compute(0, "a", 1us);
        const auto tl = sim::replay(b.g, cluster, testing::exact_options()).timeline;
        for (const unsigned threads : {1U, 2U}) {
            const auto summary = sim::summarize_run(b.g, tl, threads);
            REQUIRE(summary.ranks[0].compute == 2us);
            REQUIRE(summary.ranks[1].compute == Time{between});
        }
    }
}
