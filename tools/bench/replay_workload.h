// The replay benchmark's workload: a generated graph of many ranks with compute kernels and collectives, to
// measure replay throughput (ops per second) and memory per op.
#pragma once

#include <cstdint>

#include "traces/op_graph.h"

namespace clustersim::bench {

struct ReplayWorkloadConfig {
    std::uint32_t nodes = 128;  // 8 ranks per node
    std::uint32_t ops_per_rank = 1000;
    std::uint32_t collective_every = 10;  // one op in this many is a collective
    std::uint32_t dp_every = 10;          // one collective in this many is data-parallel (across nodes)
    std::uint64_t tp_bytes = 8 << 20;     // tensor-parallel all-reduce inside a node
    std::uint64_t dp_bytes = 64 << 20;    // data-parallel all-reduce along a rail
    /// Nodes per data-parallel group (0: all nodes): with a fixed group the work per GPU stays the same as the
    /// cluster grows (the scaling benchmark).
    std::uint32_t dp_group_nodes = 0;
};

/// Ranks r = 8 n + k (node n, GPU k): compute kernels of 50 to 500 us (measured durations), tensor-parallel
/// all-reduces over each node's 8 GPUs, and data-parallel all-reduces over the GPUs k of all nodes (one rail), or
/// of each group of dp_group_nodes consecutive nodes.
traces::OpGraph replay_workload(const ReplayWorkloadConfig& config);

}  // namespace clustersim::bench
