// What-if retargeting of measured kernel times to another GPU: compute-bound kernels scale with the two GPUs'
// peak FLOP/s for their datatype, memory-bound ones with their HBM bandwidths (docs/models.md, "Retargeting").
#pragma once

#include "topologies/gpu_spec.h"
#include "traces/op_graph.h"

namespace clustersim::sim {

/// Whether a kernel class is bound by arithmetic (gemm, attention) rather than memory.
bool compute_bound(traces::KernelClass kernel_class);

/// The factor a measured duration of `op` is multiplied by when moving from `from` to `to`.
double retarget_factor(const traces::Op& op, const topo::GpuSpec& from, const topo::GpuSpec& to);

/// Rescales every measured compute duration of `graph` (collectives and host delays keep theirs).
void retarget(traces::OpGraph& graph, const topo::GpuSpec& from, const topo::GpuSpec& to);

}  // namespace clustersim::sim
