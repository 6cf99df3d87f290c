// Roofline kernel timing with shape-aware GEMM efficiency.
#include "sim/compute_model.h"

#include <algorithm>
#include <cmath>

namespace clustersim::sim {

topo::Dtype compute_dtype(traces::DataType type) {
    switch (type) {
        case traces::DataType::fp32:
        case traces::DataType::int32:
        case traces::DataType::int64:
            return topo::Dtype::fp32;
        case traces::DataType::tf32:
            return topo::Dtype::tf32;
        case traces::DataType::fp16:
        case traces::DataType::bf16:
            return topo::Dtype::fp16;
        case traces::DataType::fp8:
        case traces::DataType::int8:
            return topo::Dtype::fp8;
    }
    return topo::Dtype::fp32;
}

namespace {
// A tile of fewer output elements than the largest re-reads its inputs more per FLOP and keeps fewer tensor-core
// pipelines busy: its best rate falls with the square root of its area relative to the largest tile (the
// largest tile reaches gemm_efficiency). An assumption shaped after NVIDIA's GEMM guide, which ranks larger
// tiles as more efficient without giving factors (docs/models.md).
double tile_size_factor(std::uint64_t area, std::uint64_t largest) {
    return std::sqrt(static_cast<double>(area) / static_cast<double>(largest));
}
std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }
// The least K one split-K block takes (four 64-deep main-loop iterations: below it the partial sums' reduction
// outweighs the gain; an assumption).
constexpr std::uint64_t min_split_k = 256;
}  // namespace

GemmTiming gemm_timing(const traces::GemmShape& shape, double flops, const topo::GpuSpec& gpu, double peak_flops) {
    GemmTiming best;
    std::uint64_t largest = 1;
    for (const auto& [tm, tn] : gpu.gemm_tiles) largest = std::max<std::uint64_t>(largest, std::uint64_t{tm} * tn);
    for (const auto& [tm, tn] : gpu.gemm_tiles) {
        const std::uint64_t tiles_m = ceil_div(shape.m, tm), tiles_n = ceil_div(shape.n, tn);
        const std::uint64_t tiles = tiles_m * tiles_n * std::max<std::uint32_t>(1, shape.batch);
        GemmTiming t;
        t.tile_m = tm;
        t.tile_n = tn;
        t.tile_efficiency =
            static_cast<double>(shape.m) * shape.n / (static_cast<double>(tiles_m * tm) * (tiles_n * tn));
        const std::uint64_t sms = static_cast<std::uint64_t>(gpu.sms);
        // Split-K: fewer tiles than SMs split K over as many thread blocks as fill the SMs (each at least
        // min_split_k deep), as cuBLAS and CUTLASS do for small M x N with a large K.
        t.splits = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(
            sms / std::max<std::uint64_t>(1, tiles), 1, std::max<std::uint64_t>(1, shape.k / min_split_k)));
        const std::uint64_t blocks = tiles * t.splits;
        t.wave_efficiency = static_cast<double>(blocks) / static_cast<double>(ceil_div(blocks, sms) * sms);
        t.efficiency = gpu.gemm_efficiency * t.tile_efficiency * t.wave_efficiency *
                       tile_size_factor(std::uint64_t{tm} * tn, largest);
        t.seconds = flops / (peak_flops * t.efficiency);
        if (best.efficiency == 0 || t.seconds < best.seconds) best = t;  // first of equals: the larger tile
    }
    return best;
}

double GemmEfficiencies::get(const traces::OpGraph& graph, std::uint32_t shape, std::size_t gpu_type,
                             const topo::GpuSpec& gpu) {
    double& e = values_[gpu_type * shapes_ + shape];
    if (e < 0) e = gemm_timing(graph.gemm_shapes[shape], 1.0, gpu, 1.0).efficiency;  // independent of FLOPs and peak
    return e;
}

engine::Time compute_time(const traces::OpGraph& graph, traces::OpId id, const topo::GpuSpec& gpu,
                          const ComputeModel& model, GemmEfficiencies* cache, std::size_t gpu_type) {
    if (model.scale != 1) {
        ComputeModel unscaled = model;
        unscaled.scale = 1;
        const auto t = compute_time(graph, id, gpu, unscaled, cache, gpu_type);
        return engine::Time{static_cast<std::int64_t>(std::llround(static_cast<double>(t.count()) * model.scale))};
    }
    if (graph.has_duration(id)) return graph.durations[id.index()];
    const traces::Op& op = graph.ops[id.index()];
    const auto cls = static_cast<std::size_t>(op.kernel_class);
    const double peak = gpu.peak_flops(compute_dtype(op.dtype));
    double seconds = 0;
    if (op.flops() > 0) {
        if (op.kernel_class == traces::KernelClass::gemm && op.shape() != traces::no_shape)
            seconds = cache ? op.flops() / (peak * cache->get(graph, op.shape(), gpu_type, gpu))
                            : gemm_timing(graph.gemm_shapes[op.shape()], op.flops(), gpu, peak).seconds;
        else if (op.kernel_class == traces::KernelClass::gemm)
            seconds = op.flops() / (peak * gpu.gemm_efficiency);
        else if (op.kernel_class == traces::KernelClass::attention)
            seconds = op.flops() / (peak * gpu.attention_efficiency);
        else
            seconds = op.flops() / (peak * model.flops_efficiency[cls]);
    }
    if (op.bytes() > 0)
        seconds = std::max(
            seconds, static_cast<double>(op.bytes()) / (gpu.hbm_bandwidth_bytes_per_s * model.memory_efficiency[cls]));
    return std::max(model.min_kernel_time, engine::from_seconds(seconds) + engine::Time{gpu.kernel_overhead_ps});
}

}  // namespace clustersim::sim
