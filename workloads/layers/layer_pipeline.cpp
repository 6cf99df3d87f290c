// The layers generator's pipeline ranks (see layer_builder.h): a replica's layers split over pp consecutive ranks,
// each step's batch in micro-batches run in GPipe or 1F1B order (traces/pipeline_schedule.h); with pp 1 and several
// micro-batches, gradient accumulation.
//
// Per rank, stream "compute": for each schedule step the forward (or backward) of the stage's layers on one
// micro-batch, as the data-parallel path times them (GEMM kernels, norms), preceded by the receive of the previous
// stage's activations (or of the next stage's gradients) and followed by the send of its own; receives are
// posted when the schedule reaches them (after the kernel before). The last micro-batch's backward fills DDP's
// buckets in reverse layer order, reduced over the stage's data-parallel group while the backward goes on; then
// the optimizer step over the stage's parameters. Memory: the stage's parameters, gradients and optimizer state,
// and each layer's activations from its forward to its backward, per micro-batch in flight.
#include <fmt/format.h>

#include "workloads/layers/layer_builder.h"

namespace clustersim::workloads {

using traces::OpId;
using traces::OpKind;

void LayerBuilder::build_pipeline_rank() {
    const auto& layers = plan_.model.layers;
    const std::uint32_t pp = plan_.pp, stage = rank_.value % pp;
    const std::uint32_t first = plan_.stage_first[stage], end = plan_.stage_first[stage + 1];
    const double width = traces::data_type_size(plan_.dtype), grad_width = traces::data_type_size(plan_.grad_dtype);
    const double mb = static_cast<double>(plan_.batch) / plan_.microbatches;
    double params = 0;
    for (std::uint32_t l = first; l < end; ++l) params += static_cast<double>(layers[l].params);
    memory(OpKind::alloc, traces::MemoryUse::parameters, 4 * params, "parameters");
    memory(OpKind::alloc, traces::MemoryUse::gradients, grad_width * params, "gradients");
    memory(OpKind::alloc, traces::MemoryUse::optimizer_state, (plan_.adam ? 8 : 4) * params, "optimizer state");
    if (plan_.compression.error_feedback && plan_.compression.on())
        memory(OpKind::alloc, traces::MemoryUse::buffers, grad_width * params, "error-feedback residual");
    // The activations a stage receives (the previous stage's output) and sends, per micro-batch.
    const double in_bytes = stage > 0 ? width * mb * static_cast<double>(layers[first - 1].activations) : 0;
    const double out_bytes = width * mb * static_cast<double>(layers[end - 1].activations);
    const std::uint32_t prev = rank_.value - 1, next = rank_.value + 1;
    const bool reduce = plan_.dp > 1;
    last_compute_ = OpId::invalid();  // receives are posted when the schedule reaches them: after this kernel
    auto posted = [&] { return last_compute_.valid() ? std::vector<OpId>{last_compute_} : std::vector<OpId>{}; };
    for (std::uint32_t step = 0; step < plan_.steps; ++step) {
        bucket_ = 0;
        bucket_index_ = 0;
        reductions_.clear();
        OpId last;
        for (const traces::PipelineStep& ps :
             traces::pipeline_schedule(plan_.schedule, pp, stage, plan_.microbatches)) {
            const std::string tag = fmt::format("step{} mb{}", step, ps.micro_batch);
            std::vector<OpId> deps;
            if (ps.forward) {
                if (stage > 0) deps = {p2p(OpKind::recv, "recv act", prev, in_bytes, tag + " recv act", posted())};
                for (std::uint32_t l = first; l < end; ++l) deps = {layer_forward(tag, l, mb, deps)};
                if (stage + 1 < pp) (void)p2p(OpKind::send, "send act", next, out_bytes, tag + " send act", deps);
                continue;
            }
            if (stage + 1 < pp) deps = {p2p(OpKind::recv, "recv grad", next, out_bytes, tag + " recv grad", posted())};
            const bool final_mb = ps.micro_batch + 1 == plan_.microbatches;
            for (std::uint32_t l = end; l-- > first;) {
                last = layer_backward(tag, l, mb, deps);
                deps = {last};
                if (final_mb && reduce)
                    add_to_bucket(step, grad_width * static_cast<double>(layers[l].params), last, l == first);
            }
            if (stage > 0) (void)p2p(OpKind::send, "send grad", prev, in_bytes, tag + " send grad", deps);
        }
        emit_decodes();
        std::vector<OpId> before_optimizer{last};
        before_optimizer.insert(before_optimizer.end(), reductions_.begin(), reductions_.end());
        (void)compute(fmt::format("step{} optimizer", step), traces::KernelClass::optimizer, 0,
                      params * (plan_.adam ? 28.0 : 20.0), traces::no_shape, before_optimizer);
    }
}

}  // namespace clustersim::workloads
