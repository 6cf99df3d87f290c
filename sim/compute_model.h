// Kernel time on a GPU: the measured duration when the trace has one, otherwise a roofline estimate from the
// GPU's spec. GEMMs with a known shape are timed with tile and wave quantization on the GPU's SMs below the
// architecture's best GEMM efficiency; fused attention at the architecture's attention efficiency; other kernels
// by their bytes at a per-class fraction of HBM bandwidth. Assumptions and sources: docs/models.md.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "engine/time.h"
#include "topologies/gpu_spec.h"
#include "traces/op_graph.h"

namespace clustersim::sim {

struct ComputeModel {
    /// Fraction of peak FLOP/s of kernels other than GEMM and attention (which use the GPU's own constants),
    /// and fraction of peak HBM bandwidth of each class, by KernelClass.
    std::array<double, 7> flops_efficiency = {0.75, 0.55, 0.5, 0.5, 0.5, 0.5, 0.5};
    std::array<double, 7> memory_efficiency = {0.8, 0.8, 0.85, 0.6, 0.85, 0.8, 0.7};
    /// Shortest kernel: launch and tail overhead of any kernel, even an empty one.
    engine::Time min_kernel_time{1'000'000};
    /// While a communication kernel runs on the same GPU, compute progresses this much slower (0.15: 15%).
    double slowdown_during_comm = 0.15;
    /// Every kernel's time times this (`system.compute_scale`): 0.5 is GPUs twice as fast, 0 computation free (the
    /// run then times its communication alone). Host delays are not scaled.
    double scale = 1;
};

/// How a GEMM of `shape` runs on `gpu`: the tile chosen and the fraction of peak FLOP/s reached.
struct GemmTiming {
    std::uint32_t tile_m = 0, tile_n = 0;
    double tile_efficiency = 1;  // useful share of the padded tiles
    std::uint32_t splits = 1;    // split-K: thread blocks per output tile, each over a share of K
    double wave_efficiency = 1;  // useful share of the last wave of thread blocks over the SMs
    double efficiency = 0;       // gemm_efficiency x tile x wave x tile-size factor
    double seconds = 0;          // compute-bound time at that efficiency (no overhead, no memory bound)
};
GemmTiming gemm_timing(const traces::GemmShape& shape, double flops, const topo::GpuSpec& gpu, double peak_flops);

/// The efficiency of each of a graph's GEMM shapes on each GPU type of a cluster, computed the first time a kernel
/// of that shape runs on that type (a replay times millions of kernels of a few dozen shapes).
class GemmEfficiencies {
public:
    GemmEfficiencies(std::size_t shapes, std::size_t gpu_types) : shapes_(shapes), values_(shapes * gpu_types, -1.0) {}
    /// gemm_timing(shape, ...).efficiency of shape index `shape` on GPU type `gpu_type` (`gpu`).
    double get(const traces::OpGraph& graph, std::uint32_t shape, std::size_t gpu_type, const topo::GpuSpec& gpu);

private:
    std::size_t shapes_;
    std::vector<double> values_;  // [gpu_type][shape]; < 0: not computed yet
};

/// Time of compute op `id` of `graph` on `gpu`: measured, or the roofline estimate plus the GPU's kernel
/// overhead, and at least min_kernel_time. `cache` (optional) keeps GEMM efficiencies of `gpu_type` across calls.
engine::Time compute_time(const traces::OpGraph& graph, traces::OpId id, const topo::GpuSpec& gpu,
                          const ComputeModel& model, GemmEfficiencies* cache = nullptr, std::size_t gpu_type = 0);

topo::Dtype compute_dtype(traces::DataType type);

}  // namespace clustersim::sim
