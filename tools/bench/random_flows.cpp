// Random-flow workload on the flow network, timed with a steady clock (wall time is what is measured here).
#include "tools/bench/random_flows.h"

#include <chrono>
#include <cmath>
#include <random>

#include "engine/simulator.h"
#include "topologies/topology_loader.h"

namespace clustersim::bench {

RandomFlowsResult run_random_flows(const RandomFlowsConfig& config) {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const topo::Cluster cluster = topo::load_topology(config.topology, config.overrides);
    engine::Simulator sim;
    sim::FlowNetwork net(cluster, sim, sim::NetworkOptions{config.sharing, false, false});
    std::mt19937_64 rng(config.seed);
    const auto& gpus = cluster.gpus();
    const double log_min = std::log(config.min_bytes), log_span = std::log(config.max_bytes) - log_min;
    std::uint64_t started = 0;
    RandomFlowsResult result;
    auto start_one = [&] {
        const auto src = gpus[rng() % gpus.size()];
        auto dst = gpus[rng() % gpus.size()];
        if (dst == src) dst = gpus[(src.index() + 1) % gpus.size()];
        const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
        const auto bytes = static_cast<std::uint64_t>(std::exp(log_min + u * log_span));
        net.start_flow(src, dst, bytes, rng(), 0);
        result.bytes += bytes;
        ++started;
    };
    // Warm the routing tables so that the timed part measures the network, not first-use Dijkstra runs.
    for (const auto g : gpus) net.router().prepare(g);
    const auto t1 = clock::now();
    for (std::uint64_t i = 0; i < config.concurrent && started < config.total_flows; ++i) start_one();
    auto handler = [&](const engine::Event& e) {
        const auto event = net.handle(e);
        if (!event.arrived) return;
        for (std::size_t k = 0; k < event.flows.size() && started < config.total_flows; ++k) start_one();
    };
    sim.run(handler);
    const auto t2 = clock::now();
    result.setup_seconds = std::chrono::duration<double>(t1 - t0).count();
    result.wall_seconds = std::chrono::duration<double>(t2 - t1).count();
    result.flows = net.flows_completed();
    result.events = sim.events_processed();
    result.rate_updates = net.rate_updates();
    result.flows_reassigned = net.flows_reassigned();
    result.flows_rerated = net.flows_rerated();
    result.simulated = sim.now();
    return result;
}

}  // namespace clustersim::bench
