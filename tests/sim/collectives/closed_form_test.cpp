// Ring calls timed in closed form (sim/replay/replay_closed_form.cpp) against the same calls run as flows: the same
// times to the picosecond, the same records, link counters and counts, on randomized calls (sizes, kinds, skew,
// calls in a row on one communicator, concurrent calls on disjoint GPUs, protocols, channels); and a flow that
// meets a call timed so on its links makes the replay start over with that call as flows.
#include <random>

#include <catch2/catch.hpp>

#include "tests/sim/replay_compare.h"
#include "tests/sim/replay_fixture.h"

using namespace clustersim;
using traces::CollectiveKind;

namespace {

/// Groups of `group` consecutive ranks, each a communicator running `calls` ring collectives in a row after skewed
/// compute (and compute between them).
traces::OpGraph grouped_calls(std::mt19937_64& rng, std::uint32_t ranks, std::uint32_t group, int calls) {
    const CollectiveKind kinds[] = {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                                    CollectiveKind::all_gather};
    testing::GraphBuilder b(ranks);
    for (const auto& [comm, members] : testing::consecutive_groups(ranks, group)) {
        for (int k = 0; k < calls; ++k) {
            const CollectiveKind kind = kinds[rng() % 3];
            const std::uint64_t bytes = 1 + rng() % 48'000'000;
            for (const std::uint32_t r : members) {
                const auto skew = engine::Time{static_cast<std::int64_t>(rng() % 8'000'000)};
                b.compute(r, "main", skew);
                b.collective(r, "main", comm, members, bytes, kind);
            }
        }
    }
    // Now and then a point-to-point transfer at a random time: on a link of a call timed in closed form, or not.
    if (rng() % 2 == 0) testing::random_side_transfer(b, rng, ranks, 30'000'000);
    return b.g;
}

/// One ring all-reduce of `bytes` over ranks 0 .. ranks-1 ("world").
void world_all_reduce(testing::GraphBuilder& b, std::uint32_t ranks, std::uint64_t bytes) {
    std::vector<std::uint32_t> all;
    for (std::uint32_t r = 0; r < ranks; ++r) all.push_back(r);
    for (std::uint32_t r = 0; r < ranks; ++r) b.collective(r, "main", "world", all, bytes);
}

/// Ring algorithm forced, otherwise exact options.
sim::ReplayOptions ring_options() {
    auto options = testing::exact_options();
    options.algorithm = sim::find_collective_algorithm("ring");
    return options;
}

}  // namespace

TEST_CASE("calls timed in closed form match flows to the picosecond", "[sim][collectives]") {
    // Rings in one NVSwitch node (each edge its own links), on a ring of cabled GPUs, and across two nodes of a
    // rail-optimized fabric (the network hops on the rails).
    const topo::Cluster clusters[] = {topo::load_topology("dgx-h100", {"nodes=1"}),
                                      testing::ring_cluster(12, "50 GB/s", "700 ns"),
                                      topo::load_topology("dgx-h100", {"nodes=2"})};
    std::mt19937_64 rng(11);
    std::uint64_t timed = 0, restarts = 0;
    for (int round = 0; round < 40; ++round) {
        const topo::Cluster& cluster = clusters[round % 3];
        const auto gpus = static_cast<std::uint32_t>(cluster.gpus().size());
        const std::uint32_t group = 2 + static_cast<std::uint32_t>(rng() % (gpus - 1));
        const traces::OpGraph g = grouped_calls(rng, gpus, group, 1 + static_cast<int>(rng() % 3));
        auto options = testing::exact_options();
        options.protocols = rng() % 2 == 0;
        options.channels = 1 + static_cast<std::uint32_t>(rng() % 8);
        // Ring schedules, listed rings, and listed plans of other algorithms (NVLS in one node: each GPU's links
        // to the switch carry its chunks one after the other; double trees: children send to a parent at once,
        // so those calls go on as flows).
        const char* algorithms[] = {"ring", "ring", "nvls", "double_tree"};
        const char* algorithm = algorithms[rng() % 4];
        options.algorithm = sim::find_collective_algorithm(algorithm);
        options.ring_schedules = rng() % 3 != 0;
        INFO("round " << round << " GPUs " << gpus << " group " << group << " protocols " << options.protocols
                      << " channels " << options.channels << " " << algorithm << " schedules "
                      << options.ring_schedules);
        const auto closed = sim::replay(g, cluster, options);
        options.closed_form = false;
        const auto flows = sim::replay(g, cluster, options);
        REQUIRE(flows.closed_form_calls == 0);
        testing::require_same_replay(closed, flows);
        timed += closed.closed_form_calls;
        restarts += closed.closed_form_restarts;
    }
    // Calls timed so, and runs started over (a transfer on a held link), both seen.
    REQUIRE(timed > 40);
    REQUIRE(restarts > 0);
}

TEST_CASE("a ring all-reduce in closed form is the alpha-beta formula", "[sim][collectives]") {
    // 2(n - 1) steps of S/n bytes over 50 GB/s links of 700 ns each: 2 x 7 x (700 ns + 1e6 / 8 B / 50 GB/s).
    const auto cluster = testing::ring_cluster(8, "50 GB/s", "700 ns");
    testing::GraphBuilder b(8);
    world_all_reduce(b, 8, 1'000'000);
    const auto result = sim::replay(b.g, cluster, testing::exact_options());
    REQUIRE(result.closed_form_calls == 1);
    REQUIRE(result.timeline.makespan == engine::Time{2 * 7 * (700'000 + 2'500'000)});
    REQUIRE(result.flows == 2 * 7 * 8);
    REQUIRE(result.bytes_on_network == 2 * 7 * 1'000'000);
}

TEST_CASE("a ring call whose own sends overlap on an edge runs as flows without starting over", "[sim][collectives]") {
    // Across two nodes, NVLink edges are faster than the network's: a fast edge's first all-gather send starts
    // before its last reduce-scatter send has left, so the call cannot be timed alone per edge.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    testing::GraphBuilder b(16);
    world_all_reduce(b, 16, 64'000'000);
    auto options = ring_options();
    const auto closed = sim::replay(b.g, cluster, options);
    REQUIRE(closed.closed_form_calls == 0);
    REQUIRE(closed.closed_form_restarts == 0);
    options.closed_form = false;
    testing::require_same_replay(closed, sim::replay(b.g, cluster, options));
}

TEST_CASE("a flow on a link held by a closed-form call starts the replay over with it as flows", "[sim][collectives]") {
    // A ring all-reduce over the 8 GPUs of one node, and a transfer from GPU 0 to GPU 1 while it runs: it shares
    // the ring's first edge, so the call's transfers do not have their links alone.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=1"});
    testing::GraphBuilder b(8);
    world_all_reduce(b, 8, 64'000'000);
    const auto wait = b.compute(0, "side", engine::Time{20'000'000});
    b.p2p(traces::OpKind::send, 0, 1, "side", 16'000'000, {wait});
    b.p2p(traces::OpKind::recv, 1, 0, "side", 16'000'000);
    auto options = ring_options();
    const auto closed = sim::replay(b.g, cluster, options);
    REQUIRE(closed.closed_form_restarts == 1);
    REQUIRE(closed.closed_form_calls == 0);
    options.closed_form = false;
    const auto flows = sim::replay(b.g, cluster, options);
    testing::require_same_replay(closed, flows);
    REQUIRE(flows.timeline.transfers == closed.timeline.transfers);
    // Contended: the transfer and the ring's first edge shared GPU 0's NVLink.
    REQUIRE(flows.timeline.contention(traces::OpId{0}) > engine::Time{0});
}
