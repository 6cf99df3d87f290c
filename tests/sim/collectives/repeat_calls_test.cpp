// Collective calls timed from the record of an earlier call alike (sim/replay/replay_repeats.cpp) against the same
// calls run as flows: the same times to the picosecond, the same records, link counters and counts, on randomized
// runs (kinds, sizes, channels, protocols, members in step or skewed the same way each time or not, competing
// traffic); a call whose members arrive otherwise than its record's makes the replay start over with it as flows.
#include <random>

#include <catch2/catch.hpp>

#include "tests/sim/replay_compare.h"
#include "tests/sim/replay_fixture.h"

using namespace clustersim;
using traces::CollectiveKind;

namespace {

/// Groups of `group` consecutive ranks, each a communicator running `calls` collectives of one kind and size in a
/// row, each after compute. The compute before call k takes d_k plus the member's skew: none (members in step),
/// a skew of its own kept from call to call, or a new one each time.
traces::OpGraph repeated_calls(std::mt19937_64& rng, std::uint32_t ranks, std::uint32_t group, int calls) {
    const CollectiveKind kinds[] = {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                                    CollectiveKind::all_gather};
    testing::GraphBuilder b(ranks);
    for (const auto& [comm, members] : testing::consecutive_groups(ranks, group)) {
        const CollectiveKind kind = kinds[rng() % 3];
        const std::uint64_t bytes = 1 + rng() % 24'000'000;
        const int skew_mode = static_cast<int>(rng() % 3);
        std::vector<std::int64_t> skew(group, 0);
        for (auto& s : skew) s = skew_mode == 0 ? 0 : static_cast<std::int64_t>(rng() % 3'000'000);
        for (int k = 0; k < calls; ++k) {
            const auto d = static_cast<std::int64_t>(rng() % 2'000'000);
            for (std::uint32_t i = 0; i < group; ++i) {
                if (skew_mode == 2) skew[i] = static_cast<std::int64_t>(rng() % 3'000'000);
                b.compute(members[i], "main", engine::Time{d + skew[i]});
                b.collective(members[i], "main", comm, members, bytes, kind);
            }
        }
    }
    // Now and then point-to-point transfers at random times, which may meet a call on its links.
    for (int p = static_cast<int>(rng() % 3); p > 0; --p) testing::random_side_transfer(b, rng, ranks, 60'000'000);
    return b.g;
}

}  // namespace

TEST_CASE("calls that repeat alone on their links are timed from records, to the picosecond", "[sim][collectives]") {
    // Calls in one NVSwitch node, on a ring of cabled GPUs, and across the rails of two and four nodes (channels
    // spread over the spines: flows that share links and contend).
    const topo::Cluster clusters[] = {
        topo::load_topology("dgx-h100", {"nodes=1"}), testing::ring_cluster(12, "50 GB/s", "700 ns"),
        topo::load_topology("dgx-h100", {"nodes=2"}), topo::load_topology("dgx-h100", {"nodes=4"})};
    std::mt19937_64 rng(5);
    std::uint64_t repeated = 0, restarts = 0;
    for (int round = 0; round < 120; ++round) {
        const topo::Cluster& cluster = clusters[round % 4];
        const auto gpus = static_cast<std::uint32_t>(cluster.gpus().size());
        const std::uint32_t group = 2 + static_cast<std::uint32_t>(rng() % (gpus - 1));
        const traces::OpGraph g = repeated_calls(rng, gpus, group, 3 + static_cast<int>(rng() % 5));
        auto options = testing::exact_options();
        options.protocols = rng() % 2 == 0;
        options.channels = 1 + static_cast<std::uint32_t>(rng() % 8);
        const char* algorithms[] = {"ring", "ring", "double_tree", "nvls"};
        const char* algorithm = algorithms[rng() % (gpus <= 8 ? 4 : 3)];
        options.algorithm = sim::find_collective_algorithm(algorithm);
        options.closed_form = rng() % 2 == 0;
        INFO("round " << round << " GPUs " << gpus << " group " << group << " protocols " << options.protocols
                      << " channels " << options.channels << " " << algorithm << " closed forms "
                      << options.closed_form);
        options.repeat_calls = true;
        const auto fast = sim::replay(g, cluster, options);
        options.repeat_calls = false;
        const auto flows = sim::replay(g, cluster, options);
        REQUIRE(flows.repeated_calls == 0);
        testing::require_same_replay(fast, flows);
        repeated += fast.repeated_calls;
        restarts += fast.closed_form_restarts;
    }
    // Calls timed from records, and runs started over (arrivals otherwise than recorded, or a flow on a held link).
    REQUIRE(repeated > 100);
    REQUIRE(restarts > 0);
}

TEST_CASE("a call repeats its record only once the record's arrivals were seen twice", "[sim][collectives]") {
    // Six all-reduces over both nodes' rail 0, the members in step: the first is noted (a key seen once is not
    // recorded), the second is recorded as the network starts noting flows for taps (so its record is not kept),
    // the third recorded, the fourth recorded again and confirms its arrivals (all at once); the last two are timed
    // from the record, in the same picoseconds after their start as the first.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    testing::GraphBuilder b(16);
    const std::vector<std::uint32_t> rail{0, 8};
    std::vector<traces::OpId> calls;
    for (int k = 0; k < 6; ++k) {
        for (const std::uint32_t r : rail) {
            b.compute(r, "main", engine::Time{1'000'000});
            const auto op = b.collective(r, "main", "rail0", rail, 64 << 20);
            if (r == 0) calls.push_back(op);
        }
    }
    auto options = testing::exact_options();
    options.channels = 4;
    options.closed_form = false;  // (a lone rail is timed by formulas otherwise)
    const auto fast = sim::replay(b.g, cluster, options);
    REQUIRE(fast.repeated_calls == 2);
    REQUIRE(fast.call_records == 1);
    REQUIRE(fast.closed_form_restarts == 0);
    const auto duration = [&](int k) { return fast.timeline.end(calls[k]) - fast.collectives[k].first_arrival; };
    for (int k = 1; k < 6; ++k) REQUIRE(duration(k) == duration(0));
    options.repeat_calls = false;
    testing::require_same_replay(fast, sim::replay(b.g, cluster, options));
}

TEST_CASE("a call whose members arrive otherwise than its record's starts the replay over", "[sim][collectives]") {
    // Five calls with one skew (the fifth timed from the record), then a sixth whose second member comes later: its
    // arrivals are not the record's, found when the record's last arrival has passed; the replay starts over with
    // that call as flows.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    testing::GraphBuilder b(16);
    const std::vector<std::uint32_t> rail{0, 8};
    for (int k = 0; k < 6; ++k) {
        b.compute(0, "main", engine::Time{1'000'000});
        b.compute(8, "main", engine::Time{k == 5 ? 2'500'000 : 1'500'000});
        for (const std::uint32_t r : rail) b.collective(r, "main", "rail0", rail, 64 << 20);
    }
    auto options = testing::exact_options();
    options.closed_form = false;
    const auto fast = sim::replay(b.g, cluster, options);
    REQUIRE(fast.closed_form_restarts == 1);
    REQUIRE(fast.repeated_calls == 1);  // the fifth
    options.repeat_calls = false;
    testing::require_same_replay(fast, sim::replay(b.g, cluster, options));
}
