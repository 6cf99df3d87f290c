// A ring call folded by its symmetries (replay_symmetry_fold.cpp: the channels' rings onto one, a ring's groups of
// positions onto one) against the same call with every ring simulated whole: the same end to the picosecond, for a
// fraction of the flows.
#include <random>

#include <catch2/catch.hpp>

#include "sim/collective_sweep.h"
#include "sim/replay/replay.h"
#include "topologies/topology_loader.h"

using namespace clustersim;
using engine::Time;
using traces::CollectiveKind;

namespace {

struct Run {
    Time end{};
    std::uint64_t flows = 0;
};

Run run(const topo::Cluster& cluster, CollectiveKind kind, std::uint64_t bytes, sim::ReplayOptions options, bool fold) {
    const auto n = static_cast<std::uint32_t>(cluster.gpus().size());
    std::vector<traces::RankId> world;
    for (std::uint32_t r = 0; r < n; ++r) world.push_back(traces::RankId{r});
    const auto graph = sim::collective_graph(n, {world}, kind, bytes);
    options.fold_by_symmetry = fold;
    options.algorithm = sim::find_collective_algorithm("ring");
    const sim::ReplayResult r = sim::replay(graph, cluster, options);
    return {r.timeline.makespan, r.flows};
}

void require_same_end(Time folded, Time unfolded) {
    // The same max-min rates in exact arithmetic, and the fill's rounding is canonical (the flows at one level get
    // one rate however it reaches them): the same end to the picosecond in every case tried (the 60 here, 300 with
    // more seeds, and the 1 MiB to 1 GiB rows at 5 to 512 GPUs in docs/performance.md).
    REQUIRE(folded == unfolded);
}
}  // namespace

TEST_CASE("a call's channels folded by symmetry end when every channel simulated does, for a channel's flows",
          "[sim][collectives][fold]") {
    // Random sizes and protocols over fabrics whose rings stay on their rails (2 and 4 nodes), change rails on the
    // wrap-around hop through a relay (3 nodes: channels only), and cross spines between leaf groups (6 and 8 nodes,
    // 2 per leaf; and 8 nodes whose leaves have a quarter of their downlink bandwidth up, where the crossings bind).
    std::mt19937_64 rng(20261206);
    const std::vector<std::vector<std::string>> fabrics = {
        {"nodes=2"},
        {"nodes=3"},
        {"nodes=4"},
        {"nodes=6", "nodes_per_leaf=2", "spines=2"},
        {"nodes=8", "nodes_per_leaf=2", "spines=2"},
        {"nodes=8", "nodes_per_leaf=2", "spines=2", "oversubscription=4"}};
    const std::vector<std::optional<sim::NcclProtocol>> protocols = {
        std::nullopt, sim::NcclProtocol::ll, sim::NcclProtocol::ll128, sim::NcclProtocol::simple};
    int cases = 0;
    for (const auto& fabric : fabrics) {
        const auto cluster = topo::load_topology("dgx-h100", fabric);
        for (const CollectiveKind kind :
             {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter, CollectiveKind::all_gather}) {
            for (int k = 0; k < 5; ++k) {
                sim::ReplayOptions options;
                options.protocol = protocols[rng() % protocols.size()];
                options.protocols = rng() % 8 != 0;  // sometimes pure alpha-beta
                options.network.record_link_utilization = false;
                options.link_counters = false;
                // 1 KiB to 256 MiB, a multiple of the 8 channels and of the members (pieces of equal bytes).
                const std::uint64_t bytes = (std::uint64_t{1} << (10 + rng() % 19)) * 3;
                INFO(fabric.front() << " " << traces::collective_kind_name(kind) << " " << bytes << " B");
                const Run folded = run(cluster, kind, bytes, options, true);
                const Run unfolded = run(cluster, kind, bytes, options, false);
                require_same_end(folded.end, unfolded.end);
                // Folded: one group of positions of ring 0 of the 8 channels' rings.
                REQUIRE(folded.flows * 8 <= unfolded.flows);
                REQUIRE(unfolded.flows % folded.flows == 0);
                ++cases;
            }
        }
    }
    REQUIRE(cases == 90);
}

TEST_CASE("a ring folds onto one group of positions: nodes on one leaf, a leaf group across spines",
          "[sim][collectives][fold]") {
    // 4 nodes on one leaf per rail. With 8 channels, shifting the rings by one node pair (16 positions: an even
    // node's order and an odd one's) maps every edge to an alike one, and by one node it does not (a GPU's port
    // would map to two ports, through ring 0 and through ring 1): 8 channels x 2 pairs. With one ring, a shift by one
    // node is a symmetry: 4 nodes. With 2 nodes per leaf behind spines, only a shift by a leaf group (2 nodes) keeps
    // the spine crossings on spine crossings: 8 channels x 4 groups, or 4 groups.
    struct Case {
        std::vector<std::string> fabric;
        std::uint32_t channels;
        std::uint64_t factor;
    };
    const std::vector<Case> cases = {{{"nodes=4"}, 8, 16},
                                     {{"nodes=4"}, 1, 4},
                                     {{"nodes=8", "nodes_per_leaf=2", "spines=2"}, 8, 32},
                                     {{"nodes=8", "nodes_per_leaf=2", "spines=2"}, 1, 4}};
    for (const Case& c : cases) {
        const auto cluster = topo::load_topology("dgx-h100", c.fabric);
        sim::ReplayOptions options;
        options.channels = c.channels;
        options.network.record_link_utilization = false;
        INFO(c.fabric.front() << ", " << c.channels << " channel(s)");
        const Run folded = run(cluster, CollectiveKind::all_reduce, std::uint64_t{1} << 28, options, true);
        const Run unfolded = run(cluster, CollectiveKind::all_reduce, std::uint64_t{1} << 28, options, false);
        require_same_end(folded.end, unfolded.end);
        REQUIRE(folded.flows * c.factor == unfolded.flows);
    }
}

TEST_CASE("a ring of GPUs cabled to their neighbours folds onto two positions", "[sim][collectives][fold]") {
    // The ring preset: each GPU forwards, each link is its own path, so a transfer is one flow of the 8 channels'
    // shares, and a shift by any number of positions maps the ring onto itself: the least, 2, is taken.
    const auto cluster = topo::load_topology("ring", {"gpus=32", "bandwidth=50 GiB/s", "latency=500 ns"});
    for (const bool protocols : {true, false}) {
        sim::ReplayOptions options;
        options.protocols = protocols;
        options.network.record_link_utilization = false;
        INFO((protocols ? "NCCL's protocols" : "alpha-beta"));
        const Run folded = run(cluster, CollectiveKind::all_reduce, std::uint64_t{1} << 20, options, true);
        const Run unfolded = run(cluster, CollectiveKind::all_reduce, std::uint64_t{1} << 20, options, false);
        require_same_end(folded.end, unfolded.end);
        REQUIRE(folded.flows * 16 == unfolded.flows);
    }
}

TEST_CASE("channels are not folded where the symmetry does not hold", "[sim][collectives][fold]") {
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    sim::ReplayOptions options;
    options.network.record_link_utilization = false;
    SECTION("4 channels on nodes of 8 GPUs: rotating ring 3 by one GPU gives no ring of the call") {
        options.channels = 4;
        const Run folded = run(cluster, CollectiveKind::all_reduce, 64 << 20, options, true);
        const Run unfolded = run(cluster, CollectiveKind::all_reduce, 64 << 20, options, false);
        REQUIRE(folded.flows == unfolded.flows);
        REQUIRE(folded.end == unfolded.end);
    }
    SECTION("pieces of unequal bytes across the channels") {
        const Run folded = run(cluster, CollectiveKind::all_reduce, (64 << 20) + 3, options, true);
        const Run unfolded = run(cluster, CollectiveKind::all_reduce, (64 << 20) + 3, options, false);
        REQUIRE(folded.flows == unfolded.flows);
        REQUIRE(folded.end == unfolded.end);
    }
    SECTION("another op in the run (the call is not alone)") {
        std::vector<traces::RankId> world;
        for (std::uint32_t r = 0; r < 16; ++r) world.push_back(traces::RankId{r});
        const auto graph = sim::collective_graph(16, {world, {traces::RankId{0}, traces::RankId{8}}},
                                                 CollectiveKind::all_reduce, 64 << 20);
        options.algorithm = sim::find_collective_algorithm("ring");
        options.fold_by_symmetry = true;
        const auto folded = sim::replay(graph, cluster, options);
        options.fold_by_symmetry = false;
        const auto unfolded = sim::replay(graph, cluster, options);
        REQUIRE(folded.flows == unfolded.flows);
        REQUIRE(folded.timeline.makespan == unfolded.timeline.makespan);
    }
}

TEST_CASE("collective sweeps fold by default and give the rows of --no-fold", "[sim][collectives][fold]") {
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=4"});
    sim::CollectiveSweepOptions options;
    options.min_bytes = 1 << 20;
    options.max_bytes = 1 << 30;
    options.factor = 32;
    options.replay.fold_by_symmetry = true;
    const auto folded = sim::run_collective_sweep(cluster, options);
    options.replay.fold_by_symmetry = false;
    const auto unfolded = sim::run_collective_sweep(cluster, options);
    REQUIRE(folded.size() == unfolded.size());
    for (std::size_t i = 0; i < folded.size(); ++i) {
        INFO(folded[i].bytes << " B");
        require_same_end(folded[i].time, unfolded[i].time);
        REQUIRE(folded[i].algorithm == unfolded[i].algorithm);
        REQUIRE(folded[i].protocol == unfolded[i].protocol);
        require_same_end(folded[i].fastest_time, unfolded[i].fastest_time);
    }
}
