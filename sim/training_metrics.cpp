// Training throughput metrics.
#include "sim/training_metrics.h"

#include "sim/compute_model.h"

namespace clustersim::sim {

traces::TrainingMetrics training_metrics(const traces::OpGraph& g, const topo::Cluster& cluster,
                                         const traces::Timeline& timeline,
                                         const std::vector<std::uint32_t>& rank_to_gpu) {
    // Several iterations back to back: the mean iteration (the facts are per iteration).
    const engine::Time iteration{timeline.makespan.count() / static_cast<std::int64_t>(g.iteration_count())};
    traces::TrainingMetrics m;
    // A plan that states its work (FLOPs; tokens for language models) gets throughput and MFU; CNNs, DLRM and the
    // other layer lists state FLOPs without tokens.
    if ((g.training.tokens <= 0 && g.training.model_flops <= 0) || iteration <= engine::Time{0} || g.rank_count == 0)
        return m;
    double hardware = 0;
    for (const traces::Op& op : g.ops)
        if (op.kind == traces::OpKind::compute) hardware += op.flops();
    m.gpus = g.job_size();
    hardware *= static_cast<double>(m.gpus) / g.rank_count;  // simulated ranks stand for the others
    hardware /= g.iteration_count();
    const double seconds = engine::to_seconds(iteration);
    m.model_flops_per_iteration = g.training.model_flops;
    m.hardware_flops_per_iteration = hardware;
    m.tflops_per_gpu = g.training.model_flops / seconds / m.gpus / 1e12;
    m.hardware_tflops_per_gpu = hardware / seconds / m.gpus / 1e12;
    m.tokens_per_second = g.training.tokens > 0 ? g.training.tokens / seconds : 0;
    // Against the mean peak of the ranks' GPUs (one type but on a heterogeneous cluster).
    double peak = 0;
    for (std::uint32_t r = 0; r < g.rank_count; ++r) {
        const std::uint32_t gpu = rank_to_gpu.empty() ? g.job_rank(traces::RankId{r}) : rank_to_gpu[r];
        peak += cluster.gpu_spec(cluster.gpus().at(gpu)).peak_flops(compute_dtype(g.training.dtype));
    }
    m.mfu = m.tflops_per_gpu * 1e12 / (peak / g.rank_count);
    if (g.training.first_token_op < timeline.size()) {
        // Inference: the first token when its op ends; each later one, the rest of the run spread over them.
        const engine::Time first = timeline.ends[g.training.first_token_op];
        m.time_to_first_token_s = engine::to_seconds(first);
        if (g.training.output_tokens > 1)
            m.time_per_output_token_s = engine::to_seconds(iteration - first) / (g.training.output_tokens - 1);
    }
    return m;
}

}  // namespace clustersim::sim
