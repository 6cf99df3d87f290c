// Memory per rank from the workload's alloc/free ops, walked in each rank's program order (op id order): the
// peak and what is held at that instant (parameters, gradients, optimizer state, activations, logits, buffers).
// A plan that exceeds its GPU's HBM is an input error that prints the worst rank's breakdown, or a warning.
#pragma once

#include <vector>

#include "topologies/cluster.h"
#include "traces/op_graph.h"
#include "traces/run_summary.h"

namespace clustersim::sim {

/// Peaks of every rank that allocates, by rank (job ranks in RankMemory::rank); `rank_to_gpu` as in ReplayOptions.
std::vector<traces::RankMemory> memory_peaks(const traces::OpGraph& graph, const topo::Cluster& cluster,
                                             const std::vector<std::uint32_t>& rank_to_gpu);

/// "rank 0: 81.2 GiB of 80 GiB HBM (parameters 10 GiB, ...)" for messages and tables.
std::string describe_memory(const traces::RankMemory& m);

/// The rank whose peak exceeds its HBM the most, or nullptr when every rank fits.
const traces::RankMemory* worst_overflow(const std::vector<traces::RankMemory>& peaks);

}  // namespace clustersim::sim
