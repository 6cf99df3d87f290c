// Retargeting by the roofline's binding resource: a kernel measured at time t on GPU A that is limited by
// arithmetic runs in t x peak_A / peak_B on GPU B; one limited by memory in t x bandwidth_A / bandwidth_B. The
// kernel class (from the kernel name in imported traces) decides which; launch overheads are not rescaled
// separately (they are part of the measured time of very short kernels, which this overestimates the gain of).
#include "sim/retarget.h"

#include <cmath>

#include "sim/compute_model.h"

namespace clustersim::sim {

bool compute_bound(traces::KernelClass kernel_class) {
    return kernel_class == traces::KernelClass::gemm || kernel_class == traces::KernelClass::attention;
}

double retarget_factor(const traces::Op& op, const topo::GpuSpec& from, const topo::GpuSpec& to) {
    if (compute_bound(op.kernel_class)) {
        const topo::Dtype dtype = compute_dtype(op.dtype);
        return from.peak_flops(dtype) / to.peak_flops(dtype);
    }
    return from.hbm_bandwidth_bytes_per_s / to.hbm_bandwidth_bytes_per_s;
}

void retarget(traces::OpGraph& graph, const topo::GpuSpec& from, const topo::GpuSpec& to) {
    if (graph.durations.empty()) return;
    for (std::size_t i = 0; i < graph.ops.size(); ++i) {
        const traces::Op& op = graph.ops[i];
        engine::Time& duration = graph.durations[i];
        if (op.kind != traces::OpKind::compute || duration.count() < 0) continue;
        duration = engine::Time{static_cast<std::int64_t>(
            std::llround(static_cast<double>(duration.count()) * retarget_factor(op, from, to)))};
    }
}

}  // namespace clustersim::sim
