// The incremental max-min update finds the same allocation as recomputing the whole component.
#include <random>

#include <catch2/catch.hpp>

#include "engine/simulator.h"
#include "sim/collective_sweep.h"
#include "sim/network/flow_network.h"
#include "topologies/topology_loader.h"

using namespace clustersim;

namespace {
std::vector<engine::Time> random_flow_arrivals(const topo::Cluster& cluster, bool incremental, std::uint64_t seed) {
    engine::Simulator sim;
    sim::NetworkOptions options;
    options.incremental = incremental;
    options.record_link_utilization = false;
    sim::FlowNetwork net(cluster, sim, options);
    std::mt19937_64 rng(seed);
    const auto& gpus = cluster.gpus();
    std::vector<engine::Time> arrivals(3000, engine::Time{-1});
    std::uint32_t started = 0;
    auto start_one = [&] {
        const auto src = gpus[rng() % gpus.size()];
        auto dst = gpus[rng() % gpus.size()];
        if (dst == src) dst = gpus[(src.index() + 1) % gpus.size()];
        const std::uint64_t bytes = 1 + rng() % 50'000'000;
        const std::uint32_t weight = 1 + static_cast<std::uint32_t>(rng() % 3);
        const auto route = net.router().route(src, dst, rng());
        net.start_flow_on_route(src, dst, route, bytes, started++, weight);
    };
    for (int i = 0; i < 200; ++i) start_one();
    auto handler = [&](const engine::Event& e) {
        const auto event = net.handle(e);
        if (!event.arrived) return;
        for (const sim::FlowId f : event.flows) {
            arrivals[net.owner(f)] = sim.now();
            if (started < arrivals.size()) start_one();
        }
    };
    sim.run(handler);
    return arrivals;
}
}  // namespace

TEST_CASE("incremental max-min updates give the same finish times as full recomputation", "[sim][network]") {
    const auto cluster =
        topo::load_topology("dgx-h100", {"nodes=8", "fabric=leaf-spine", "nodes_per_leaf=2", "spines=2"});
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const auto reference = random_flow_arrivals(cluster, false, seed);
        const auto incremental = random_flow_arrivals(cluster, true, seed);
        for (std::size_t i = 0; i < reference.size(); ++i) {
            INFO("seed " << seed << " flow " << i << " reference " << reference[i].count() << " incremental "
                         << incremental[i].count());
            // Rates agree up to floating-point rounding (residuals summed in another order): finish times to a
            // relative 1e-6.
            REQUIRE(std::llabs(reference[i].count() - incremental[i].count()) <= reference[i].count() / 1'000'000);
        }
    }
}

TEST_CASE("incremental and full max-min agree on a collective over a rail-optimized fabric", "[sim][network]") {
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=16"});
    sim::CollectiveSweepOptions options;
    options.min_bytes = options.max_bytes = 256 << 20;
    options.replay.algorithm = sim::find_collective_algorithm("ring");
    const auto incremental = sim::run_collective_sweep(cluster, options);
    options.replay.network.incremental = false;
    const auto reference = sim::run_collective_sweep(cluster, options);
    INFO("reference " << reference[0].time.count() << " incremental " << incremental[0].time.count());
    REQUIRE(std::llabs(reference[0].time.count() - incremental[0].time.count()) <=
            reference[0].time.count() / 1'000'000);
}
