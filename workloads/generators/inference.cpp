// The inference generator: a dense decoder-only transformer serving one batch of requests with tensor (tp) and
// pipeline (pp) parallelism: the prefill of every prompt, then `output_len` decode steps, each producing one token
// per request. Rank = stage x tp + tensor rank.
//
// Per rank and layer, on stream "compute": a GEMM kernel for the layer's matrix multiplications (2 x tokens x the
// rank's weights FLOPs, moving its weights and activations: the decode steps are bound by reading the weights) and
// an attention kernel (prefill: causal, 2 x b x s^2 x h / tp FLOPs; decode: 4 x b x L x h / tp FLOPs reading the
// K and V cache of the L tokens so far), with Megatron's two all-reduces per layer when tp > 1. Stages pass their
// activations on (send/recv); the last stage computes the logits of each request's last token, and with pp > 1
// sends the sampled tokens back to the first stage, which the next decode step waits for. Memory: the rank's
// weights and its share of the KV cache for prompt plus output, allocated up front.
#include <algorithm>

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
    std::uint32_t tp = 1, pp = 1, batch = 1, prompt = 1, output = 1;
    traces::DataType dtype = traces::DataType::bf16;
};

std::uint32_t integer_in(const engine::Params& p, const char* name, std::int64_t min, std::int64_t max) {
    return static_cast<std::uint32_t>(p.integer_in(name, min, max));
}

InferencePlan read_plan(const engine::Params& p) {
    InferencePlan plan;
    plan.model = read_transformer_model(p);
    if (plan.model.experts > 0)
        p.fail("model", "inference of mixture-of-experts models is not modelled yet (dense models only)");
    plan.tp = integer_in(p, "tp", 1, 1 << 10);
    plan.pp = integer_in(p, "pp", 1, 1 << 10);
    plan.batch = integer_in(p, "batch", 1, 1 << 20);
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
                                  {"batch", ParamType::integer, "8", "requests served together"},
                                  {"prompt_len", ParamType::integer, "2048", "tokens of each prompt (the prefill)"},
                                  {"output_len", ParamType::integer, "128", "tokens each request generates"},
                                  {"dtype", ParamType::string, "bf16", "datatype of weights, activations and KV cache"},
                              });
    return specs;
}

std::uint64_t inference_ranks(const engine::Params& params) {
    return std::uint64_t{integer_in(params, "tp", 1, 1 << 10)} * integer_in(params, "pp", 1, 1 << 10);
}

OpGraph build_inference(const engine::Params& params) {
    const InferencePlan plan = read_plan(params);
    const TransformerModel& m = plan.model;
    const std::uint32_t per_stage = m.layers / plan.pp, tp = plan.tp;
    const double ops = double(tp) * plan.pp * (plan.output + 1.0) * (per_stage * 4.0 + 6.0);
    engine::require_memory(ops * 200.0, fmt::format("the inference plan ({:.3g} ops)", ops),
                           "a shorter output_len, fewer layers or fewer ranks", params.location("output_len").file);
    const double width = traces::data_type_size(plan.dtype), h = m.hidden, b = plan.batch;
    const double kv_dim = double(m.kv_heads) * m.head_dim();  // K (and V) width per token, all heads
    const double layer_weights = (m.layer_params(0) - 2.0 * h) / tp;
    OpGraph g;
    g.rank_count = tp * plan.pp;
    g.source = fmt::format("inference generator ({}, tp={}, pp={}, batch {}, prompt {}, output {})",
                           m.name.empty() ? "custom" : m.name, tp, plan.pp, plan.batch, plan.prompt, plan.output);
    auto rank_of = [&](std::uint32_t stage, std::uint32_t t) { return RankId{stage * tp + t}; };
    // Communicators: each stage's TP group; each tensor rank with its counterpart on the next stage, and the last
    // stage's with the first's (the sampled tokens).
    std::vector<traces::CommId> tp_comm(plan.pp), next_comm(std::size_t{plan.pp} * tp), token_comm(tp);
    for (std::uint32_t st = 0; st < plan.pp; ++st) {
        std::vector<RankId> members;
        for (std::uint32_t t = 0; t < tp; ++t) members.push_back(rank_of(st, t));
        if (tp > 1) tp_comm[st] = g.communicator(fmt::format("tp.stage{}", st), members);
        for (std::uint32_t t = 0; st + 1 < plan.pp && t < tp; ++t)
            next_comm[st * tp + t] =
                g.communicator(fmt::format("pp.{}-{}.tp{}", st, st + 1, t), {rank_of(st, t), rank_of(st + 1, t)});
    }
    for (std::uint32_t t = 0; t < tp && plan.pp > 1; ++t)
        token_comm[t] = g.communicator(fmt::format("tokens.tp{}", t), {rank_of(plan.pp - 1, t), rank_of(0, t)});
    OpId first_token;
    for (std::uint32_t st = 0; st < plan.pp; ++st) {
        for (std::uint32_t t = 0; t < tp; ++t) {
            const RankId rank = rank_of(st, t);
            const auto compute = g.stream(rank, "compute");
            const bool first = st == 0, last = st + 1 == plan.pp;
            auto kernel = [&](const std::string& name, traces::KernelClass cls, double flops, double bytes,
                              traces::GemmShape shape, std::vector<OpId> deps) {
                traces::Op op{rank, compute, g.intern(name), OpKind::compute, cls, plan.dtype};
                op.flops = flops;
                op.bytes = engine::saturated_bytes(bytes);
                if (shape.m > 0) op.shape = g.intern(shape);
                return g.add(op, deps);
            };
            auto tp_all_reduce = [&](const std::string& name, double bytes, OpId after) {
                if (tp == 1) return after;
                traces::Op op{
                    rank, compute, g.intern(name), OpKind::collective, traces::KernelClass::communication, plan.dtype};
                op.collective = CollectiveKind::all_reduce;
                op.bytes = engine::saturated_bytes(bytes);
                op.comm = tp_comm[st];
                return g.add(op);
            };
            auto p2p = [&](OpKind kind, const char* stream, traces::CommId comm, RankId peer, double bytes,
                           const std::string& name, std::vector<OpId> deps) {
                traces::Op op{
                    rank, g.stream(rank, stream), g.intern(name), kind, traces::KernelClass::communication, plan.dtype};
                op.bytes = engine::saturated_bytes(bytes);
                op.comm = comm;
                op.peer = peer;
                return g.add(op, deps);
            };
            // Memory: the stage's weights (embedding on the first, the output layer on the last) and the KV cache.
            traces::Op weights{rank,      compute, g.intern("alloc weights"), OpKind::alloc, traces::KernelClass::other,
                               plan.dtype};
            const double table = double(m.vocab) * h / tp;
            weights.bytes = engine::saturated_bytes(
                width * (per_stage * layer_weights + (first ? table : 0) + (last && !m.tie_embeddings ? table : 0)));
            weights.memory = traces::MemoryUse::parameters;
            g.add(weights);
            traces::Op cache = weights;
            cache.name = g.intern("alloc KV cache");
            cache.bytes =
                engine::saturated_bytes(2 * b * (plan.prompt + plan.output) * kv_dim / tp * width * per_stage);
            cache.memory = traces::MemoryUse::buffers;
            g.add(cache);
            // One pass over the stage: prefill (step 0, every prompt token) or a decode step (one token each).
            std::vector<OpId> waiting;  // what the pass's first kernel waits for
            for (std::uint32_t step = 0; step <= plan.output; ++step) {
                const bool prefill = step == 0;
                const double tokens = prefill ? b * plan.prompt : b;
                const double context = plan.prompt + step;  // tokens whose K and V the attention reads
                const std::string tag = prefill ? std::string("prefill") : fmt::format("decode{}", step);
                if (!first) {
                    waiting = {p2p(OpKind::recv, "recv", next_comm[(st - 1) * tp + t], rank_of(st - 1, t),
                                   tokens * h * width, tag + " recv activations", waiting)};
                } else if (!prefill && plan.pp > 1) {
                    waiting = {p2p(OpKind::recv, "recv", token_comm[t], rank_of(plan.pp - 1, t), b * 4,
                                   tag + " recv tokens", waiting)};
                }
                OpId at;
                for (std::uint32_t l = 0; l < per_stage; ++l) {
                    const std::string name = fmt::format("{} layer{}", tag, st * per_stage + l);
                    const auto rows = static_cast<std::uint32_t>(std::min(tokens, 4e9));
                    at = kernel(name + " matmuls", traces::KernelClass::gemm, 2 * tokens * layer_weights,
                                width * (layer_weights + 6 * tokens * h), {rows, m.ffn_hidden / tp, m.hidden, 1},
                                waiting);
                    waiting.clear();
                    const double attention_flops =
                        prefill ? 2 * b * double(plan.prompt) * plan.prompt * h / tp : 4 * b * context * h / tp;
                    const double kv_bytes = 2 * b * context * kv_dim / tp * width;
                    at = kernel(name + " attention", traces::KernelClass::attention, attention_flops,
                                kv_bytes + 2 * tokens * h / tp * width, {}, {at});
                    at = tp_all_reduce(name + " attention all-reduce", tokens * h * width, at);
                    at = tp_all_reduce(name + " MLP all-reduce", tokens * h * width, at);
                }
                if (!last) {
                    p2p(OpKind::send, "send", next_comm[st * tp + t], rank_of(st + 1, t), tokens * h * width,
                        tag + " send activations", {at});
                }
                if (last) {
                    // The logits of each request's last token, then the sampled tokens to the first stage.
                    at = kernel(tag + " logits", traces::KernelClass::gemm, 2 * b * h * double(m.vocab) / tp,
                                width * (double(m.vocab) * h / tp + b * h), {plan.batch, m.vocab / tp, m.hidden, 1},
                                {at});
                    if (prefill && t == 0) first_token = at;
                    if (plan.pp > 1 && step < plan.output)
                        p2p(OpKind::send, "send tokens", token_comm[t], rank_of(0, t), b * 4, tag + " send tokens",
                            {at});
                }
            }
        }
    }
    // Model FLOPs: 2 per weight per token processed (prompt and generated), plus the attention.
    const double tokens = b * (double(plan.prompt) + plan.output);
    g.training.model_flops = 2 * tokens * (m.layers * (m.layer_params(0) - 2.0 * h) + double(m.vocab) * h);
    g.training.tokens = b * plan.output;
    g.training.dtype = plan.dtype;
    g.training.first_token_op = first_token.value;
    g.training.output_tokens = plan.output;
    return g;
}

}  // namespace clustersim::workloads
