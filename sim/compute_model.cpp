// Roofline kernel timing.
#include "sim/compute_model.h"

#include <algorithm>

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

engine::Time compute_time(const traces::Op& op, const topo::GpuSpec& gpu, const ComputeModel& model) {
    if (op.has_duration()) return op.duration;
    const auto cls = static_cast<std::size_t>(op.kernel_class);
    double seconds = 0;
    if (op.flops > 0) seconds = op.flops / (gpu.peak_flops(compute_dtype(op.dtype)) * model.flops_efficiency[cls]);
    if (op.bytes > 0)
        seconds = std::max(
            seconds, static_cast<double>(op.bytes) / (gpu.hbm_bandwidth_bytes_per_s * model.memory_efficiency[cls]));
    return std::max(model.min_kernel_time, engine::from_seconds(seconds));
}

}  // namespace clustersim::sim
