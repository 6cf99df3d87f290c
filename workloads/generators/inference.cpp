// The inference generator: a decoder-only transformer (dense or mixture-of-experts) serving one batch of requests
// with tensor (tp), expert (ep) and pipeline (pp) parallelism: the prefill of every prompt, then `output_len`
// decode steps, each producing one token per request. Each stage holds ep attention replicas of tp ranks, each
// replica serving batch / ep of the requests; rank = stage x (ep x tp) + replica x tp + tensor rank.
//
// Per rank and dense layer, on stream "compute": a GEMM kernel for the layer's matrix multiplications (2 x tokens x
// the rank's weights FLOPs, moving its weights and activations: the decode steps are bound by reading the weights)
// and an attention kernel (prefill: causal, 2 x b x s^2 x h / tp FLOPs; decode: 4 x b x L x h / tp FLOPs reading
// the K and V cache of the L tokens so far), with Megatron's two all-reduces per layer when tp > 1. A MoE layer
// runs the attention, router and shared experts the same way, then its routed experts: the E experts are spread
// over the stage's ep x tp ranks (ep 1: each expert split over the tp ranks; ep > 1: E / (ep x tp) whole experts
// per rank, each rank's share of its replica's tokens dispatched to the experts' ranks by an all-to-all over the
// stage and combined back by another). The experts kernel does the rank's share of the top_k assignments
// (balanced routing) and reads the weights of the experts they hit: with T tokens in the stage, an expert gets at
// least one with probability 1 - (1 - top_k / E)^T (uniform routing), so decode reads few experts at batch 1 and
// all of them at large batches. Stages pass their activations on (send/recv); the last stage computes the logits
// of each request's last token, and with pp > 1 sends the sampled tokens back to the first stage, which the next
// decode step waits for. Memory: the rank's weights and its replica's share of the KV cache for prompt plus
// output, allocated up front.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/memory_budget.h"
#include "engine/units.h"
#include "workloads/transformer/transformer_plan.h"
#include "workloads/workload_registry.h"

namespace clustersim::workloads {

using traces::CollectiveKind;
using traces::OpGraph;
using traces::OpId;
using traces::OpKind;
using traces::RankId;

namespace {

struct InferencePlan {
    TransformerModel model;
    std::uint32_t tp = 1, pp = 1, ep = 1, batch = 1, prompt = 1, output = 1;
    traces::DataType dtype = traces::DataType::bf16;
};

std::uint32_t integer_in(const engine::Params& p, const char* name, std::int64_t min, std::int64_t max) {
    return static_cast<std::uint32_t>(p.integer_in(name, min, max));
}

InferencePlan read_plan(const engine::Params& p) {
    InferencePlan plan;
    plan.model = read_transformer_model(p);
    plan.tp = integer_in(p, "tp", 1, 1 << 10);
    plan.pp = integer_in(p, "pp", 1, 1 << 10);
    plan.ep = integer_in(p, "ep", 1, 1 << 10);
    plan.batch = integer_in(p, "batch", 1, 1 << 20);
    if (plan.ep > 1) {
        if (plan.model.experts == 0)
            p.fail("ep", fmt::format("expert parallelism needs a mixture-of-experts model ('{}' is dense)",
                                     plan.model.name.empty() ? "the model" : plan.model.name));
        if (plan.model.experts % (plan.ep * plan.tp) != 0)
            p.fail("ep",
                   fmt::format("ep x tp = {} does not divide the {} experts", plan.ep * plan.tp, plan.model.experts));
        if (plan.batch % plan.ep != 0)
            p.fail("ep", fmt::format("ep {} does not divide the batch of {} requests over its replicas", plan.ep,
                                     plan.batch));
    }
    plan.prompt = integer_in(p, "prompt_len", 1, 1 << 22);
    plan.output = integer_in(p, "output_len", 1, 1 << 20);
    if (plan.model.heads % plan.tp != 0 || plan.model.kv_heads % plan.tp != 0)
        p.fail("tp", fmt::format("tp {} does not divide the {} heads and {} key/value heads", plan.tp, plan.model.heads,
                                 plan.model.kv_heads));
    if (plan.model.layers % plan.pp != 0)
        p.fail("pp", fmt::format("pp {} does not divide the {} layers", plan.pp, plan.model.layers));
    const auto dtype = traces::parse_data_type(p.string("dtype"));
    if (!dtype) p.fail("dtype", fmt::format("unknown datatype '{}'", p.string("dtype")));
    plan.dtype = *dtype;
    return plan;
}

}  // namespace

std::vector<engine::ParamSpec> inference_params() {
    using engine::ParamType;
    std::vector<engine::ParamSpec> specs{{"generator", ParamType::string, "inference", "this generator's name"}};
    for (auto spec : transformer_model_params()) {
        if (spec.name == "model") spec.default_value = "llama3-70b";
        specs.push_back(spec);
    }
    specs.insert(specs.end(), {
                                  {"tp", ParamType::integer, "1", "tensor-parallel ranks (divides heads and kv_heads)"},
                                  {"pp", ParamType::integer, "1", "pipeline stages (divides the layers)"},
                                  {"ep", ParamType::integer, "1",
                                   "expert parallelism (MoE models): ep attention replicas of tp ranks per stage, each "
                                   "serving batch / ep requests, the experts spread over their ep x tp ranks with an "
                                   "all-to-all dispatch and combine per MoE layer"},
                                  {"batch", ParamType::integer, "8", "requests served together"},
                                  {"prompt_len", ParamType::integer, "2048", "tokens of each prompt (the prefill)"},
                                  {"output_len", ParamType::integer, "128", "tokens each request generates"},
                                  {"dtype", ParamType::string, "bf16", "datatype of weights, activations and KV cache"},
                              });
    return specs;
}

std::uint64_t inference_ranks(const engine::Params& params) {
    return std::uint64_t{integer_in(params, "tp", 1, 1 << 10)} * integer_in(params, "pp", 1, 1 << 10) *
           integer_in(params, "ep", 1, 1 << 10);
}

OpGraph build_inference(const engine::Params& params) {
    const InferencePlan plan = read_plan(params);
    const TransformerModel& m = plan.model;
    const std::uint32_t per_stage = m.layers / plan.pp, tp = plan.tp, ep = plan.ep, width_ranks = ep * tp;
    const double ops = double(width_ranks) * plan.pp * (plan.output + 1.0) * (per_stage * 6.0 + 6.0);
    engine::require_memory(ops * 200.0, fmt::format("the inference plan ({:.3g} ops)", ops),
                           "a shorter output_len, fewer layers or fewer ranks", params.location("output_len").file);
    const double width = traces::data_type_size(plan.dtype), h = m.hidden, b = double(plan.batch) / ep;
    const double kv_dim = double(m.kv_heads) * m.head_dim();  // K (and V) width per token, all heads
    const double layer_weights = (m.layer_params(0) - 2.0 * h) / tp;
    // A MoE layer's weights every token uses on this rank (attention, router, shared experts: split over tp), one
    // routed expert's, and the routed experts the rank holds a share of.
    const double expert_weights = m.mlp_params(m.moe_ffn_hidden);
    const double moe_dense_weights = (m.attention_params() + h * m.experts + m.shared_experts * expert_weights) / tp;
    OpGraph g;
    g.rank_count = width_ranks * plan.pp;
    g.source = fmt::format("inference generator ({}, tp={}, {}pp={}, batch {}, prompt {}, output {})",
                           m.name.empty() ? "custom" : m.name, tp, ep > 1 ? fmt::format("ep={}, ", ep) : "", plan.pp,
                           plan.batch, plan.prompt, plan.output);
    auto rank_of = [&](std::uint32_t stage, std::uint32_t replica, std::uint32_t t) {
        return RankId{stage * width_ranks + replica * tp + t};
    };
    // Communicators: each replica's TP group; each rank with its counterpart on the next stage, and the last
    // stage's with the first's (the sampled tokens); with ep > 1 each stage's ranks for the experts' all-to-alls.
    // Names carry the replica only when there are several.
    auto replica_tag = [&](std::uint32_t e) { return ep > 1 ? fmt::format(".r{}", e) : std::string(); };
    const std::size_t slots = std::size_t{plan.pp} * width_ranks;
    std::vector<traces::CommId> tp_comm(std::size_t{plan.pp} * ep), next_comm(slots), token_comm(width_ranks),
        moe_comm(plan.pp);
    for (std::uint32_t st = 0; st < plan.pp; ++st) {
        std::vector<RankId> stage_members;
        for (std::uint32_t e = 0; e < ep; ++e) {
            std::vector<RankId> members;
            for (std::uint32_t t = 0; t < tp; ++t) members.push_back(rank_of(st, e, t));
            stage_members.insert(stage_members.end(), members.begin(), members.end());
            if (tp > 1) tp_comm[st * ep + e] = g.communicator(fmt::format("tp.stage{}{}", st, replica_tag(e)), members);
            for (std::uint32_t t = 0; st + 1 < plan.pp && t < tp; ++t)
                next_comm[st * width_ranks + e * tp + t] =
                    g.communicator(fmt::format("pp.{}-{}{}.tp{}", st, st + 1, replica_tag(e), t),
                                   {rank_of(st, e, t), rank_of(st + 1, e, t)});
        }
        if (ep > 1) moe_comm[st] = g.communicator(fmt::format("ep.stage{}", st), stage_members);
    }
    for (std::uint32_t e = 0; e < ep && plan.pp > 1; ++e)
        for (std::uint32_t t = 0; t < tp; ++t)
            token_comm[e * tp + t] = g.communicator(fmt::format("tokens{}.tp{}", replica_tag(e), t),
                                                    {rank_of(plan.pp - 1, e, t), rank_of(0, e, t)});
    OpId first_token;
    for (std::uint32_t st = 0; st < plan.pp; ++st) {
        for (std::uint32_t e = 0; e < ep; ++e) {
            for (std::uint32_t t = 0; t < tp; ++t) {
                const RankId rank = rank_of(st, e, t);
                const auto compute = g.stream(rank, "compute");
                const bool first = st == 0, last = st + 1 == plan.pp;
                auto kernel = [&](const std::string& name, traces::KernelClass cls, double flops, double bytes,
                                  traces::GemmShape shape, std::vector<OpId> deps) {
                    traces::Op op{compute, g.intern(name), OpKind::compute, cls, plan.dtype};
                    op.set_flops(flops);
                    op.set_bytes(engine::saturated_bytes(bytes));
                    if (shape.m > 0) op.set_shape(g.intern(shape));
                    return g.add(op, deps);
                };
                auto collective = [&](CollectiveKind kind, traces::CommId comm, const std::string& name, double bytes,
                                      OpId after) {
                    if (!comm.valid()) return after;
                    traces::Op op{compute, g.intern(name), OpKind::collective, traces::KernelClass::communication,
                                  plan.dtype};
                    op.collective = kind;
                    op.set_bytes(engine::saturated_bytes(bytes));
                    op.set_comm(comm);
                    return g.add(op);
                };
                const traces::CommId tp_group = tp_comm[st * ep + e];
                auto p2p = [&](OpKind kind, const char* stream, traces::CommId comm, RankId peer, double bytes,
                               const std::string& name, std::vector<OpId> deps) {
                    traces::Op op{g.stream(rank, stream), g.intern(name), kind, traces::KernelClass::communication,
                                  plan.dtype};
                    op.set_bytes(engine::saturated_bytes(bytes));
                    op.set_comm(comm);
                    op.set_peer(peer);
                    return g.add(op, deps);
                };
                // Memory: the stage's weights (embedding on the first, the output layer on the last) and the
                // replica's share of the KV cache.
                traces::Op weights{compute, g.intern("alloc weights"), OpKind::alloc, traces::KernelClass::other,
                                   plan.dtype};
                const double table = double(m.vocab) * h / tp;
                std::uint32_t moe_layers = 0;
                for (std::uint32_t l = st * per_stage; l < (st + 1) * per_stage; ++l) moe_layers += m.moe_layer(l);
                const double stage_weights =
                    (per_stage - moe_layers) * layer_weights +
                    moe_layers * (moe_dense_weights + m.experts * expert_weights / width_ranks);
                weights.set_bytes(engine::saturated_bytes(
                    width * (stage_weights + (first ? table : 0) + (last && !m.tie_embeddings ? table : 0))));
                weights.set_memory(traces::MemoryUse::parameters);
                g.add(weights);
                traces::Op cache = weights;
                cache.name = g.intern("alloc KV cache");
                cache.set_bytes(
                    engine::saturated_bytes(2 * b * (plan.prompt + plan.output) * kv_dim / tp * width * per_stage));
                cache.set_memory(traces::MemoryUse::buffers);
                g.add(cache);
                const std::size_t slot = st * width_ranks + e * tp + t;
                // One pass over the stage: prefill (step 0, every prompt token) or a decode step (one token each).
                std::vector<OpId> waiting;  // what the pass's first kernel waits for
                for (std::uint32_t step = 0; step <= plan.output; ++step) {
                    const bool prefill = step == 0;
                    const double tokens = prefill ? b * plan.prompt : b;  // the replica's
                    const double context = plan.prompt + step;            // tokens whose K and V the attention reads
                    const std::string tag = prefill ? std::string("prefill") : fmt::format("decode{}", step);
                    if (!first) {
                        waiting = {p2p(OpKind::recv, "recv", next_comm[slot - width_ranks], rank_of(st - 1, e, t),
                                       tokens * h * width, tag + " recv activations", waiting)};
                    } else if (!prefill && plan.pp > 1) {
                        waiting = {p2p(OpKind::recv, "recv", token_comm[e * tp + t], rank_of(plan.pp - 1, e, t), b * 4,
                                       tag + " recv tokens", waiting)};
                    }
                    OpId at;
                    const auto rows = static_cast<std::uint32_t>(std::min(tokens, 4e9));
                    for (std::uint32_t l = 0; l < per_stage; ++l) {
                        const std::uint32_t layer = st * per_stage + l;
                        const std::string name = fmt::format("{} layer{}", tag, layer);
                        const bool moe = m.moe_layer(layer);
                        const double dense = moe ? moe_dense_weights : layer_weights;
                        at = kernel(name + " matmuls", traces::KernelClass::gemm, 2 * tokens * dense,
                                    width * (dense + 6 * tokens * h),
                                    {rows, (moe ? m.hidden : m.ffn_hidden) / tp, m.hidden, 1}, waiting);
                        waiting.clear();
                        const double attention_flops =
                            prefill ? 2 * b * double(plan.prompt) * plan.prompt * h / tp : 4 * b * context * h / tp;
                        const double kv_bytes = 2 * b * context * kv_dim / tp * width;
                        at = kernel(name + " attention", traces::KernelClass::attention, attention_flops,
                                    kv_bytes + 2 * tokens * h / tp * width, {}, {at});
                        at = collective(CollectiveKind::all_reduce, tp_group, name + " attention all-reduce",
                                        tokens * h * width, at);
                        if (moe) {
                            // The rank's share of the replica's tokens goes to the experts' ranks and back.
                            const double sent = tokens / tp * m.top_k * h * width;
                            if (ep > 1)
                                at = collective(CollectiveKind::all_to_all, moe_comm[st], name + " dispatch", sent, at);
                            // Balanced routing: the stage's T x top_k assignments over its ep x tp ranks; the
                            // experts hit at least once are read.
                            const double stage_tokens = tokens * ep;
                            const double assignments = stage_tokens * m.top_k / width_ranks;
                            const double hit = 1 - std::pow(1 - double(m.top_k) / m.experts, stage_tokens);
                            const double read = m.experts * hit * expert_weights / width_ranks;
                            at = kernel(name + " experts", traces::KernelClass::gemm, 2 * assignments * expert_weights,
                                        width * (read + 4 * assignments * h),
                                        {static_cast<std::uint32_t>(std::min(assignments, 4e9)) + 1,
                                         m.moe_ffn_hidden / (ep > 1 ? 1 : tp), m.hidden, 1},
                                        {at});
                            if (ep > 1)
                                at = collective(CollectiveKind::all_to_all, moe_comm[st], name + " combine", sent, at);
                        }
                        at = collective(CollectiveKind::all_reduce, tp_group, name + " MLP all-reduce",
                                        tokens * h * width, at);
                    }
                    if (!last) {
                        p2p(OpKind::send, "send", next_comm[slot], rank_of(st + 1, e, t), tokens * h * width,
                            tag + " send activations", {at});
                    }
                    if (last) {
                        // The logits of each request's last token, then the sampled tokens to the first stage.
                        const auto requests = static_cast<std::uint32_t>(b);
                        at = kernel(tag + " logits", traces::KernelClass::gemm, 2 * b * h * double(m.vocab) / tp,
                                    width * (double(m.vocab) * h / tp + b * h), {requests, m.vocab / tp, m.hidden, 1},
                                    {at});
                        if (prefill && t == 0 && e == 0) first_token = at;
                        if (plan.pp > 1 && step < plan.output)
                            p2p(OpKind::send, "send tokens", token_comm[e * tp + t], rank_of(0, e, t), b * 4,
                                tag + " send tokens", {at});
                    }
                }
            }
        }
    }
    // Model FLOPs: 2 per weight a token uses per token processed (prompt and generated), plus the attention.
    const double tokens = double(plan.batch) * (double(plan.prompt) + plan.output);
    g.training.model_flops =
        2 * tokens *
        (m.experts > 0 ? m.active_matmul_params() : m.layers * (m.layer_params(0) - 2.0 * h) + double(m.vocab) * h);
    g.training.tokens = double(plan.batch) * plan.output;
    g.training.dtype = plan.dtype;
    g.training.first_token_op = first_token.value;
    g.training.output_tokens = plan.output;
    return g;
}

}  // namespace clustersim::workloads
