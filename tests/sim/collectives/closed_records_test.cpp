// Ring calls timed in closed form from the record of an earlier call of their key (sim/replay/
// replay_closed_records.cpp) against the same calls timed by the closed form each time: the same times to the
// picosecond, the same records, link counters and counts, on randomized runs (kinds, sizes, channels, protocols,
// members in step or one of them late now and then, competing traffic), and the closed form from the arrivals when a
// call's members do not all arrive at one instant.
#include <random>

#include <catch2/catch.hpp>

#include "tests/sim/replay_compare.h"
#include "tests/sim/replay_fixture.h"

using namespace clustersim;
using traces::CollectiveKind;

namespace {

/// Groups of `group` consecutive ranks, each a communicator running `calls` collectives of one kind and size in a
/// row, each after compute of one duration for all members; now and then one member's compute is longer by up to
/// `late` ps (0: never).
traces::OpGraph calls_in_step(std::mt19937_64& rng, std::uint32_t ranks, std::uint32_t group, int calls,
                              std::int64_t late) {
    const CollectiveKind kinds[] = {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                                    CollectiveKind::all_gather};
    testing::GraphBuilder b(ranks);
    for (const auto& [comm, members] : testing::consecutive_groups(ranks, group)) {
        const CollectiveKind kind = kinds[rng() % 3];
        const std::uint64_t bytes = 1 + rng() % 24'000'000;
        for (int k = 0; k < calls; ++k) {
            const auto d = static_cast<std::int64_t>(rng() % 2'000'000);
            const std::uint32_t slow = late > 0 && rng() % 4 == 0 ? static_cast<std::uint32_t>(rng() % group) : group;
            const std::int64_t extra = late > 0 ? 1 + static_cast<std::int64_t>(rng() % late) : 0;
            for (std::uint32_t i = 0; i < group; ++i) {
                b.compute(members[i], "main", engine::Time{d + (i == slow ? extra : 0)});
                b.collective(members[i], "main", comm, members, bytes, kind);
            }
        }
    }
    for (int p = static_cast<int>(rng() % 3); p > 0; --p) testing::random_side_transfer(b, rng, ranks, 60'000'000);
    return b.g;
}

}  // namespace

TEST_CASE("ring calls in closed form are timed from records, to the picosecond", "[sim][collectives]") {
    // One and two NVSwitch nodes (calls within a node, and across the rails) and a ring of cabled GPUs.
    const topo::Cluster clusters[] = {topo::load_topology("dgx-h100", {"nodes=1"}),
                                      testing::ring_cluster(12, "50 GB/s", "700 ns"),
                                      topo::load_topology("dgx-h100", {"nodes=2"})};
    std::mt19937_64 rng(11);
    std::uint64_t from_records = 0, closed = 0;
    for (int round = 0; round < 90; ++round) {
        const topo::Cluster& cluster = clusters[round % 3];
        const auto gpus = static_cast<std::uint32_t>(cluster.gpus().size());
        const std::uint32_t group = 2 + static_cast<std::uint32_t>(rng() % (std::min<std::uint32_t>(gpus, 8) - 1));
        const std::int64_t late = rng() % 2 == 0 ? 0 : static_cast<std::int64_t>(rng() % 400'000);
        const traces::OpGraph g = calls_in_step(rng, gpus, group, 3 + static_cast<int>(rng() % 6), late);
        auto options = testing::exact_options();
        options.protocols = rng() % 2 == 0;
        options.channels = 1 + static_cast<std::uint32_t>(rng() % 8);
        options.algorithm = sim::find_collective_algorithm("ring");
        INFO("round " << round << " GPUs " << gpus << " group " << group << " late " << late << " protocols "
                      << options.protocols << " channels " << options.channels);
        options.repeat_calls = true;
        const auto fast = sim::replay(g, cluster, options);
        options.repeat_calls = false;
        const auto reference = sim::replay(g, cluster, options);
        REQUIRE(reference.closed_form_repeats == 0);
        REQUIRE(fast.closed_form_calls == reference.closed_form_calls);
        testing::require_same_replay(fast, reference);
        from_records += fast.closed_form_repeats;
        closed += fast.closed_form_calls;
    }
    // (319 of 711 calls in closed form come from records; 244 had a record but a late member, and were timed from
    // their arrivals.)
    REQUIRE(from_records > 250);
    REQUIRE(from_records < closed);
}

TEST_CASE("a ring call in closed form takes its record when its members arrive at one instant", "[sim][collectives]") {
    // Six reduce-scatters over one node's eight GPUs, the members in step until the fourth call, where GPU 5 comes
    // 1 us late (and stays 1 us behind in the calls after it): the first is recorded, the second and third are
    // committed from its record, the last three are timed by the closed form from their arrivals.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=1"});
    testing::GraphBuilder b(8);
    const std::vector<std::uint32_t> node{0, 1, 2, 3, 4, 5, 6, 7};
    for (int k = 0; k < 6; ++k) {
        for (const std::uint32_t r : node) {
            b.compute(r, "main", engine::Time{k == 3 && r == 5 ? 2'000'000 : 1'000'000});
            b.collective(r, "main", "node", node, 96 << 20, CollectiveKind::reduce_scatter);
        }
    }
    auto options = testing::exact_options();
    options.channels = 4;
    options.protocols = true;
    options.algorithm = sim::find_collective_algorithm("ring");
    const auto fast = sim::replay(b.g, cluster, options);
    REQUIRE(fast.closed_form_calls == 6);
    REQUIRE(fast.closed_form_repeats == 2);
    REQUIRE(fast.closed_form_restarts == 0);
    const auto& calls_made = fast.collectives;
    for (int k = 0; k < 6; ++k) {
        REQUIRE(calls_made[k].last_arrival - calls_made[k].first_arrival == engine::Time{k < 3 ? 0 : 1'000'000});
        if (k == 1 || k == 2)
            REQUIRE(calls_made[k].end - calls_made[k].first_arrival == calls_made[0].end - calls_made[0].first_arrival);
    }
    options.repeat_calls = false;
    const auto reference = sim::replay(b.g, cluster, options);
    REQUIRE(reference.closed_form_repeats == 0);
    testing::require_same_replay(fast, reference);
}
