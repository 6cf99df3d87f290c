// A message's times against hand-computed ones: when each side was ready, when the transfer started and ended, for
// rendezvous and eager (buffered) sends, whichever side comes first; and which side's ready time the timeline keeps.
#include <catch2/catch.hpp>

#include "tests/sim/replay_fixture.h"

using namespace clustersim;
using namespace std::chrono_literals;
using engine::Time;
using testing::GraphBuilder;
using traces::OpId;
using traces::OpKind;

namespace {

struct Message {
    OpId send, recv;
};

// Rank 0 sends 1 MB to rank 1, each side after a compute of its own length (none when 0); `eager`: a buffered send.
Message message(GraphBuilder& b, Time send_after, Time recv_after, bool eager) {
    const auto after = [&](std::uint32_t rank, Time t) {
        return t > Time{0} ? std::vector<OpId>{b.compute(rank, "s", t)} : std::vector<OpId>{};
    };
    const std::vector<OpId> before_send = after(0, send_after), before_recv = after(1, recv_after);
    Message m{b.p2p(OpKind::send, 0, 1, "s", 1'000'000, before_send),
              b.p2p(OpKind::recv, 1, 0, "s", 1'000'000, before_recv)};
    b.g.ops[m.send.index()].eager = eager;
    return m;
}

// 1 MB on a 50 GB/s link with 1 us latency: 21 us.
constexpr Time transfer = 21us;

}  // namespace

TEST_CASE("a message starts when both sides are ready, and the side that waited keeps its ready time",
          "[sim][replay][p2p]") {
    const auto cluster = testing::ring_cluster(2, "50 GB/s", "1 us");
    SECTION("rendezvous, the recv first") {
        GraphBuilder b(2);
        const Message m = message(b, 10us, Time{0}, false);
        const auto tl = sim::replay(b.g, cluster, testing::exact_options()).timeline;
        for (const OpId op : {m.send, m.recv}) {
            REQUIRE(tl.start(op) == 10us);
            REQUIRE(tl.ends[op.index()] == 10us + transfer);
        }
        REQUIRE(tl.waits == std::vector<std::pair<OpId, Time>>{{m.recv, Time{0}}});
        REQUIRE(tl.ready(m.recv) == Time{0});
        REQUIRE(tl.ready(m.send) == 10us);
        // Both start as the send's compute ends: their critical predecessor's end, so no start is kept apart.
        REQUIRE(tl.critical_pred(m.recv) == tl.critical_pred(m.send));
        REQUIRE(tl.starts.empty());
    }
    SECTION("rendezvous, the send first") {
        GraphBuilder b(2);
        const Message m = message(b, Time{0}, 10us, false);
        const auto tl = sim::replay(b.g, cluster, testing::exact_options()).timeline;
        REQUIRE(tl.start(m.send) == 10us);
        REQUIRE(tl.ends[m.recv.index()] == 10us + transfer);
        REQUIRE(tl.waits == std::vector<std::pair<OpId, Time>>{{m.send, Time{0}}});
    }
    SECTION("eager, the recv posted before the data: it starts with the transfer") {
        GraphBuilder b(2);
        const Message m = message(b, 5us, Time{0}, true);
        const auto tl = sim::replay(b.g, cluster, testing::exact_options()).timeline;
        REQUIRE(tl.start(m.send) == 5us);
        REQUIRE(tl.start(m.recv) == 5us);
        REQUIRE(tl.ends[m.recv.index()] == 5us + transfer);
        REQUIRE(tl.waits == std::vector<std::pair<OpId, Time>>{{m.recv, Time{0}}});
        REQUIRE(tl.critical_pred(m.recv) == m.send);
        // The recv starts with the transfer, before its critical predecessor (the send) ends: kept apart.
        REQUIRE(tl.starts == std::vector<std::pair<OpId, Time>>{{m.recv, 5us}});
    }
    SECTION("eager, the data there before the recv: the recv ends as it is posted") {
        GraphBuilder b(2);
        const Message m = message(b, Time{0}, 30us, true);
        const auto tl = sim::replay(b.g, cluster, testing::exact_options()).timeline;
        REQUIRE(tl.start(m.send) == Time{0});
        REQUIRE(tl.ends[m.send.index()] == transfer);
        REQUIRE(tl.start(m.recv) == 30us);
        REQUIRE(tl.ends[m.recv.index()] == 30us);
        REQUIRE(tl.waits.empty());
        REQUIRE(tl.starts.empty());
    }
    SECTION("eager, the recv posted during the transfer: it waits for the rest of it, not before") {
        GraphBuilder b(2);
        const Message m = message(b, Time{0}, 10us, true);
        const auto tl = sim::replay(b.g, cluster, testing::exact_options()).timeline;
        REQUIRE(tl.start(m.recv) == 10us);
        REQUIRE(tl.ends[m.recv.index()] == transfer);
        REQUIRE(tl.waits.empty());
    }
}

TEST_CASE("a call's members start when the last arrives, each start said by its critical predecessor",
          "[sim][replay][timeline]") {
    // Rank 0 computes 10 us and rank 1 30 us, then both all-reduce 1 MB: each member starts at 30 us, when the
    // later compute ends (its critical predecessor for both); rank 0 was ready at 10 us.
    const auto cluster = testing::ring_cluster(2, "50 GB/s", "1 us");
    GraphBuilder b(2);
    const OpId c0 = b.compute(0, "s", 10us), c1 = b.compute(1, "s", 30us);
    const OpId a0 = b.collective(0, "s", "world", {0, 1}, 1'000'000, traces::CollectiveKind::all_reduce, {c0});
    const OpId a1 = b.collective(1, "s", "world", {0, 1}, 1'000'000, traces::CollectiveKind::all_reduce, {c1});
    const auto tl = sim::replay(b.g, cluster, testing::exact_options()).timeline;
    for (const OpId a : {a0, a1}) {
        REQUIRE(tl.critical_pred(a) == c1);
        REQUIRE(tl.start(a) == 30us);
        REQUIRE(tl.end(a) > 30us);
    }
    REQUIRE(tl.end(a0) == tl.end(a1));
    REQUIRE(tl.ready(a0) == 10us);
    REQUIRE(tl.ready(a1) == 30us);
    REQUIRE(tl.starts.empty());
}
