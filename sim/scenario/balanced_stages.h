// Pipeline stages on GPUs of different speeds (`placement: balanced`): each stage gets as many layers as its
// GPUs run in the time of the others, so that the stages compute for about as long. Resolved here, where the hardware
// is known, and handed to the transformer generator as explicit layer counts (workloads never read hardware).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/params.h"
#include "topologies/cluster.h"
#include "traces/op_graph.h"

namespace clustersim::sim {

/// `layers` over stages whose one layer takes layer_s[k] and whose other kernels take extra_s[k]: at least one each,
/// the others one at a time to the stage that would finish soonest (ties: the earliest), which minimizes the
/// slowest stage's compute.
std::vector<std::uint32_t> balance_layers(std::uint32_t layers, const std::vector<double>& layer_s,
                                          const std::vector<double>& extra_s);

/// When the transformer generator's placement is "balanced": builds the plan with the layers as even as they
/// go (`build`) with one and with two micro-batches per replica, replays both (rank r on GPU r, default options),
/// extrapolates linearly to the plan's micro-batches, takes each stage's time per layer and outside its
/// layers on its first rank's compute stream (kernels and tensor-parallel collectives), replaces the value with
/// balance_layers' counts, and returns a line for resolved.yaml ("" when there is nothing to resolve).
std::string resolve_balanced_stages(engine::Params& params, const topo::Cluster& cluster,
                                    traces::OpGraph (*build)(const engine::Params&));

}  // namespace clustersim::sim
