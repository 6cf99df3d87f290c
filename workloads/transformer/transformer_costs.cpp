// Kernel, message and memory costs of a transformer plan (docs/models.md "Transformer generator").
#include "workloads/transformer/transformer_costs.h"

#include <algorithm>
#include <cmath>

namespace clustersim::workloads {

namespace {

std::uint32_t dim(double x) { return static_cast<std::uint32_t>(std::max(1.0, std::ceil(x))); }

// C[m x n] = A[m x k] B[k x n]: 2mnk FLOPs; reads A and B, writes C.
KernelCost gemm(double m, double n, double k, double width, std::uint32_t batch = 1) {
    KernelCost c;
    c.kernel_class = traces::KernelClass::gemm;
    c.flops = 2.0 * m * n * k * batch;
    c.bytes = width * (m * k + k * n + m * n) * batch;
    c.shape = traces::GemmShape{dim(m), dim(n), dim(k), batch};
    return c;
}

KernelCost memory_bound(double bytes, traces::KernelClass cls = traces::KernelClass::elementwise) {
    KernelCost c;
    c.kernel_class = cls;
    c.bytes = bytes;
    return c;
}

double ffn_outputs(const TransformerModel& m, double inner) { return m.ffn == FfnKind::swiglu ? 2 * inner : inner; }

}  // namespace

int activation_width(const TransformerPlan& plan) {
    return plan.dtype == traces::DataType::fp8 ? 2 : traces::data_type_size(plan.dtype);
}
int matmul_width(const TransformerPlan& plan) { return traces::data_type_size(plan.dtype); }

LayerCosts layer_costs(const TransformerPlan& plan, std::uint32_t layer) {
    const TransformerModel& m = plan.model;
    const double e = activation_width(plan), w = matmul_width(plan);
    const double t = plan.tp, h = m.hidden, d = m.head_dim();
    const double tokens = plan.local_tokens();                                // T: this rank's tokens
    const double norm_tokens = plan.sequence_parallel ? tokens / t : tokens;  // norms, dropout, residual
    const double heads = m.heads / t, kv = m.kv_heads / t;
    LayerCosts c;
    c.moe = m.moe_layer(layer);
    c.norm = memory_bound(2 * e * norm_tokens * h);
    c.residual = memory_bound(3 * e * norm_tokens * h + norm_tokens * h);  // dropout (1-byte mask) + residual add
    c.qkv = gemm(tokens, (heads + 2 * kv) * d, h, w);
    // Attention core: QK^T and AV over the whole sequence for this rank's queries (ring attention brings the
    // other ranks' K and V); flash-style traffic reads Q, K, V and writes O, never the s x s matrix.
    const double keys = m.seq_len;
    c.attention.kernel_class = traces::KernelClass::attention;
    c.attention.flops = 4.0 * heads * tokens * keys * d * (plan.causal ? 0.5 : 1.0);
    c.attention.bytes = e * tokens * d * (2 * heads + 2 * kv);
    if (!plan.flash_attention) c.attention.bytes += 3.0 * e * heads * tokens * keys;  // scores, softmax, dropout
    c.projection = gemm(tokens, h, heads * d, w);
    c.tp_bytes = plan.tp > 1 ? e * tokens * h : 0;
    c.kv_block_bytes = plan.cp > 1 ? 2.0 * e * tokens * kv * d : 0;
    // MoE: tokens enter the block sequence-parallel (T / tp per rank); each goes to top_k experts; the busiest rank
    // gets min(imbalance, capacity factor) times the balanced share.
    const double routed = m.top_k * norm_tokens * std::min(plan.imbalance, plan.capacity_factor);
    if (!c.moe) {
        const double inner = m.ffn_hidden / t;
        c.mlp_in = gemm(tokens, ffn_outputs(m, inner), h, w);
        c.activation = memory_bound(e * tokens * (ffn_outputs(m, inner) + inner));
        c.mlp_out = gemm(tokens, h, inner, w);
    } else {
        const std::uint32_t local = m.experts / plan.ep;
        const double per_expert = routed / local;
        c.router = gemm(norm_tokens, m.experts, h, w);
        c.expert_in = gemm(per_expert, ffn_outputs(m, m.moe_ffn_hidden), h, w, local);
        c.expert_activation = memory_bound(e * routed * (ffn_outputs(m, m.moe_ffn_hidden) + m.moe_ffn_hidden));
        c.expert_out = gemm(per_expert, h, m.moe_ffn_hidden, w, local);
        if (m.shared_experts > 0) {
            const double inner = double(m.shared_experts) * m.moe_ffn_hidden;
            c.shared_in = gemm(norm_tokens, ffn_outputs(m, inner), h, w);
            c.shared_out = gemm(norm_tokens, h, inner, w);
        }
        c.all_to_all_bytes = plan.ep > 1 ? e * routed * h : 0;
    }
    // Activations kept for the backward (Korthikanti et al. 2022, generalised to GQA, SwiGLU and experts):
    // replicated over TP without SP: both norms' inputs, the QKV and MLP inputs (e bytes each), two dropout masks;
    // split over TP: Q, K, V, the attention output, the MLP's intermediate outputs; standard attention also keeps
    // the scores, softmax and its dropout mask (5 a s bytes per token).
    const double replicated = (4 * e + 2) * tokens * h;
    double split = e * tokens * (heads + 2 * kv) * d + e * tokens * heads * d;
    if (!c.moe) {
        const double inner = m.ffn_hidden / t;
        split += e * tokens * (ffn_outputs(m, inner) + inner);
    } else {
        split += e * routed * (h + ffn_outputs(m, m.moe_ffn_hidden) + m.moe_ffn_hidden) + 4.0 * norm_tokens * m.experts;
        if (m.shared_experts > 0) {
            const double inner = double(m.shared_experts) * m.moe_ffn_hidden;
            split += e * norm_tokens * (ffn_outputs(m, inner) + inner);
        }
    }
    const double scores = plan.flash_attention ? 0.0 : 5.0 * heads * tokens * keys;
    switch (plan.recompute) {
        case Recompute::full:
            c.activation_bytes = e * norm_tokens * h;  // the layer's input only
            break;
        case Recompute::selective:
            c.activation_bytes = (plan.sequence_parallel ? replicated / t : replicated) + split;
            break;
        case Recompute::none:
            c.activation_bytes = (plan.sequence_parallel ? replicated / t : replicated) + split + scores;
            break;
    }
    return c;
}

KernelCost backward_of(const KernelCost& f) {
    KernelCost b = f;
    b.flops = 2 * f.flops;
    b.bytes = 2 * f.bytes;
    if (f.shape.m > 0) b.shape.batch = 2 * f.shape.batch;  // data gradient and weight gradient
    return b;
}

KernelCost embedding_cost(const TransformerPlan& plan) {
    const double e = activation_width(plan);
    return memory_bound(2 * e * plan.local_tokens() * plan.model.hidden, traces::KernelClass::embedding);
}

KernelCost logits_cost(const TransformerPlan& plan) {
    return gemm(plan.local_tokens(), plan.model.vocab / double(plan.tp), plan.model.hidden, matmul_width(plan));
}

KernelCost loss_cost(const TransformerPlan& plan) { return memory_bound(2 * logits_bytes(plan)); }

double logits_bytes(const TransformerPlan& plan) { return 4.0 * plan.local_tokens() * plan.model.vocab / plan.tp; }

StageParams layer_params_on_rank(const TransformerPlan& plan, std::uint32_t layer) {
    const TransformerModel& m = plan.model;
    const double t = plan.tp;
    StageParams p;
    p.dense = 2.0 * m.hidden + m.attention_params() / t;
    if (!m.moe_layer(layer)) {
        p.dense += m.mlp_params(m.ffn_hidden) / t;
    } else {
        p.dense += double(m.hidden) * m.experts + m.shared_experts * m.mlp_params(m.moe_ffn_hidden) / t;
        p.expert = double(m.experts / plan.ep) * m.mlp_params(m.moe_ffn_hidden) / t;
    }
    return p;
}

StageParams stage_params(const TransformerPlan& plan, std::uint32_t stage) {
    StageParams p;
    for (std::uint32_t c = 0; c < plan.virtual_stages; ++c) {
        const auto [first, count] = plan.chunk_layers(c, stage);
        for (std::uint32_t l = first; l < first + count; ++l) {
            const StageParams lp = layer_params_on_rank(plan, l);
            p.dense += lp.dense;
            p.expert += lp.expert;
        }
    }
    const double table = double(plan.model.vocab) * plan.model.hidden / plan.tp;
    const bool first = stage == 0, last = stage + 1 == plan.pp;
    if (first) p.dense += table;
    if (last) p.dense += plan.model.hidden + (plan.model.tie_embeddings && first ? 0.0 : table);
    return p;
}

StaticMemory static_memory(const TransformerPlan& plan, std::uint32_t stage) {
    const StageParams p = stage_params(plan, stage);
    const double w = activation_width(plan);  // weights and gradients in BF16/FP16 (FP8 plans cast per GEMM)
    const double dense_shards = double(plan.cp) * plan.dp, expert_shards = dense_shards / plan.ep;
    auto sharded = [&](bool on) { return on ? p.dense / dense_shards + p.expert / expert_shards : p.total(); };
    StaticMemory s;
    // Mixed-precision Adam: fp32 master weights and two fp32 moments, 12 bytes per parameter (ZeRO, Rajbhandari
    // et al. 2020, section 3.1), sharded from stage 1; gradients from stage 2; parameters from stage 3.
    s.optimizer_state = 12.0 * sharded(plan.zero_stage >= 1);
    s.gradients = w * sharded(plan.zero_stage >= 2);
    s.parameters = w * sharded(plan.zero_stage >= 3);
    if (plan.zero_stage >= 3) {
        // Gathered weights of the layer running and of the one prefetched.
        double largest = 0;
        for (std::uint32_t l = 0; l < plan.model.layers; ++l)
            largest = std::max(largest, layer_params_on_rank(plan, l).total());
        s.buffers = 2.0 * w * largest;
    }
    return s;
}

double model_flops_per_iteration(const TransformerPlan& plan) {
    const TransformerModel& m = plan.model;
    const double tokens = double(plan.global_batch_size) * m.seq_len;
    const double attention_per_token = 12.0 * m.seq_len * double(m.heads) * m.head_dim();  // fwd + bwd, full
    return tokens * (6.0 * m.active_matmul_params() + m.layers * attention_per_token);
}

}  // namespace clustersim::workloads
