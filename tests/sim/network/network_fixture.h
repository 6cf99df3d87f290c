// A hand-built network for flow tests: GPUs and switches wired as each test needs, and a run loop that feeds
// network events to the FlowNetwork and collects arrivals in order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/simulator.h"
#include "sim/network/flow_network.h"
#include "topologies/cluster.h"

namespace clustersim::testing {

struct NetworkFixture {
    topo::Cluster cluster;
    engine::Simulator sim;
    std::unique_ptr<sim::FlowNetwork> net;
    std::vector<std::pair<std::uint32_t, engine::Time>> arrivals;  // (owner, time) in arrival order

    topo::DeviceId gpu(const std::string& name) {
        const auto spec = cluster.add_gpu_spec(topo::GpuCatalogue::builtin().gpus().front());
        return cluster.add_device(topo::Device{name, topo::DeviceKind::gpu, 0, spec, 0});
    }
    topo::DeviceId network_switch(const std::string& name) {
        return cluster.add_device(topo::Device{name, topo::DeviceKind::network_switch, -1, -1, 0});
    }
    void start(sim::NetworkOptions options = {}) { net = std::make_unique<sim::FlowNetwork>(cluster, sim, options); }
    /// Runs until `until` (default: until no event is left), recording arrivals.
    void run(engine::Time until = engine::max_time) {
        auto handler = [this](const engine::Event& e) {
            const auto event = net->handle(e);
            if (!event.arrived) return;
            for (const sim::FlowId f : event.flows) arrivals.emplace_back(net->owner(f), sim.now());
        };
        sim.run(handler, engine::RunLimits{until});
    }
    engine::Time arrival_of(std::uint32_t owner) const {
        for (const auto& [o, t] : arrivals) {
            if (o == owner) return t;
        }
        return engine::Time{-1};
    }
};

}  // namespace clustersim::testing
