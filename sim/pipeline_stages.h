// The pipeline stages of a generated pipeline: each stage's GPUs and its busiest rank's compute time, so that on a
// heterogeneous cluster the summary names the slowest stage (the one that sets the pipeline's pace).
#pragma once

#include <vector>

#include "topologies/cluster.h"
#include "traces/op_graph.h"
#include "traces/run_summary.h"

namespace clustersim::sim {

/// One report per stage of graph.rank_stage (empty when the graph has none); `ranks` is the summary's breakdown.
std::vector<traces::StageReport> stage_reports(const traces::OpGraph& graph,
                                               const std::vector<traces::RankBreakdown>& ranks,
                                               const topo::Cluster& cluster,
                                               const std::vector<std::uint32_t>& rank_to_gpu);

}  // namespace clustersim::sim
