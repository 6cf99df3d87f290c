// Throughput of a generated training workload: model and hardware FLOP/s per GPU, MFU against the GPU's dense
// peak for the workload's datatype, tokens per second (definitions: docs/models.md "Training metrics").
#pragma once

#include <vector>

#include "engine/time.h"
#include "topologies/cluster.h"
#include "traces/op_graph.h"
#include "traces/run_summary.h"
#include "traces/timeline.h"

namespace clustersim::sim {

/// All zero when the graph has no training facts (traces).
traces::TrainingMetrics training_metrics(const traces::OpGraph& graph, const topo::Cluster& cluster,
                                         const traces::Timeline& timeline,
                                         const std::vector<std::uint32_t>& rank_to_gpu);

}  // namespace clustersim::sim
