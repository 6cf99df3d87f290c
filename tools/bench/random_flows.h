// The network benchmark's workload: random flows between GPUs of a large cluster, sizes log-uniform between two
// bounds, a fixed number in flight (each arrival starts the next) until a total has been started.
#pragma once

#include <cstdint>
#include <string>

#include "sim/network/flow_network.h"

namespace clustersim::bench {

struct RandomFlowsConfig {
    std::string topology = "dgx-h100";
    std::vector<std::string> overrides = {"nodes=128", "fabric=rail-optimized"};
    std::uint64_t total_flows = 100'000;
    std::uint64_t concurrent = 1'000;
    double min_bytes = 1024;
    double max_bytes = 1024.0 * 1024 * 1024;
    std::uint64_t seed = 1;
    sim::SharingModel sharing = sim::SharingModel::max_min;
};

struct RandomFlowsResult {
    double wall_seconds = 0;
    double setup_seconds = 0;  // building the cluster
    std::uint64_t flows = 0;
    std::uint64_t events = 0;
    std::uint64_t rate_updates = 0;
    std::uint64_t flows_reassigned = 0;
    std::uint64_t flows_rerated = 0;
    engine::Time simulated{};
    std::uint64_t bytes = 0;
};

RandomFlowsResult run_random_flows(const RandomFlowsConfig& config);

}  // namespace clustersim::bench
