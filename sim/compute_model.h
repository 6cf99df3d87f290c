// Kernel time on a GPU: the measured duration when the trace has one, otherwise a roofline estimate from the
// GPU's spec with an efficiency per kernel class (defaults and their sources: docs/models.md).
#pragma once

#include <array>

#include "engine/time.h"
#include "topologies/gpu_spec.h"
#include "traces/op_graph.h"

namespace clustersim::sim {

struct ComputeModel {
    /// Fraction of peak FLOP/s (and of peak HBM bandwidth) a kernel of each class reaches, by KernelClass.
    std::array<double, 7> flops_efficiency = {0.75, 0.55, 0.5, 0.5, 0.5, 0.5, 0.5};
    std::array<double, 7> memory_efficiency = {0.8, 0.8, 0.85, 0.6, 0.85, 0.8, 0.7};
    /// Shortest kernel: launch and tail overhead of any kernel, even an empty one.
    engine::Time min_kernel_time{1'000'000};
    /// While a communication kernel runs on the same GPU, compute progresses this much slower (0.15: 15%).
    double slowdown_during_comm = 0.15;
};

/// Time of compute op `op` on `gpu`: measured, or max(flops / achieved FLOP/s, bytes / achieved bandwidth)
/// and at least min_kernel_time.
engine::Time compute_time(const traces::Op& op, const topo::GpuSpec& gpu, const ComputeModel& model);

topo::Dtype compute_dtype(traces::DataType type);

}  // namespace clustersim::sim
