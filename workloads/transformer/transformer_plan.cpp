// The transformer generator's parameters and the checks of a plan.
#include "workloads/transformer/transformer_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/split_list.h"
#include "engine/yaml_reader.h"

namespace clustersim::workloads {

using engine::ParamType;

const char* recompute_name(Recompute r) {
    return r == Recompute::full ? "full" : r == Recompute::selective ? "selective" : "none";
}

const std::vector<engine::ParamSpec>& transformer_params() {
    static const std::vector<engine::ParamSpec> specs = [] {
        std::vector<engine::ParamSpec> table = {
            {"generator", ParamType::string, "transformer", "this generator's name"},
            {"model", ParamType::string, "", "a model preset (clustersim models); the dimension keys override it"},
            {"layers", ParamType::integer, "0", "transformer layers (0: from the preset)"},
            {"hidden", ParamType::integer, "0", "hidden size h (0: from the preset)"},
            {"heads", ParamType::integer, "0", "attention heads (0: from the preset)"},
            {"kv_heads", ParamType::integer, "0",
             "key/value heads, fewer than heads for grouped-query attention (0: heads)"},
            {"ffn_hidden", ParamType::integer, "0", "MLP inner size (0: from the preset, else 4 h)"},
            {"ffn", ParamType::string, "", "MLP kind: gelu or swiglu (default: the preset's, else gelu)"},
            {"vocab", ParamType::integer, "0", "vocabulary size (0: from the preset)"},
            {"seq_len", ParamType::integer, "0", "sequence length in tokens (0: from the preset)"},
            {"tie_embeddings", ParamType::string, "",
             "true: the output layer shares the input embedding (default: the preset's, else false)"},
            {"micro_batch_size", ParamType::integer, "1", "sequences per micro-batch"},
            {"global_batch_size", ParamType::integer, "0",
             "sequences per iteration (0: one micro-batch per replica and pipeline stage)"},
            {"dtype", ParamType::string, "bf16", "datatype of weights, activations and gradients: fp16, bf16 or fp8"},
            {"tp", ParamType::integer, "1", "tensor-parallel size (Megatron column/row split)"},
            {"sequence_parallel", ParamType::boolean, "false",
             "sequence parallelism: reduce-scatter + all-gather instead of all-reduce"},
            {"pp", ParamType::integer, "1", "pipeline stages"},
            {"virtual_stages", ParamType::integer, "1", "model chunks per stage (> 1: Megatron's interleaved 1F1B)"},
            {"schedule", ParamType::string, "1f1b", "pipeline schedule: gpipe or 1f1b"},
            {"cp", ParamType::integer, "1", "context-parallel size (ring attention)"},
            {"dp", ParamType::string, "auto", "data-parallel size, or auto: world size / (tp x pp x cp)"},
            {"world_size", ParamType::integer, "0", "GPUs of the job (0: every GPU of the topology)"},
            {"zero_stage", ParamType::integer, "0", "ZeRO stage: 0, 1, 2 or 3 (3: parameters sharded, FSDP-style)"},
            {"experts", ParamType::integer, "0", "routed experts per MoE layer (0: dense; default: the preset's)"},
            {"top_k", ParamType::integer, "0", "experts per token (0: the preset's, else 1)"},
            {"ep", ParamType::integer, "1", "expert-parallel size (divides experts and cp x dp)"},
            {"capacity_factor", ParamType::number, "1",
             "expert capacity over the balanced load (tokens beyond it are dropped)"},
            {"moe_imbalance", ParamType::number, "1",
             "tokens of the busiest expert rank over the balanced share (>= 1)"},
            {"moe_ffn_hidden", ParamType::integer, "0", "inner size of each expert (0: the preset's, else ffn_hidden)"},
            {"moe_every", ParamType::integer, "0", "every n-th layer is MoE (0: the preset's, else 1)"},
            {"shared_experts", ParamType::integer, "-1",
             "experts every token uses besides the routed ones (-1: the preset's, else 0)"},
            {"dense_layers", ParamType::integer, "-1",
             "leading dense layers before the first MoE layer (-1: the preset's, else 0)"},
            {"recompute", ParamType::string, "none",
             "activation recomputation: none, selective (attention core) or full"},
            {"grad_bucket", ParamType::bytes, "25 MiB",
             "data-parallel gradient bucket, reduced as the backward pass fills it"},
            {"rank_order", ParamType::string, "tp-cp-ep-dp-pp",
             "placement of the grid, fastest dimension first (Megatron's order)"},
            {"attention", ParamType::string, "flash", "attention kernel: flash (no s x s matrix kept) or standard"},
            {"causal", ParamType::boolean, "true", "causal masking (halves the attention core's FLOPs)"},
            {"optimizer", ParamType::boolean, "true",
             "end with the optimizer step (Adam) and ZeRO's parameter all-gather"},
            {"placement", ParamType::string, "even",
             "layers over the pipeline stages: even, or balanced (by each stage's speed on its GPUs, measured by the "
             "scenario on the even split: heterogeneous clusters)"},
            {"stage_layers", ParamType::string, "",
             "layers of each pipeline stage, e.g. \"10,14,14,10\" (an explicit split; virtual_stages 1); default: by "
             "placement"},
            {"fold", ParamType::string, "auto",
             "symmetry reduction: none (simulate every rank), dp (one data-parallel replica), tp+dp (also one rank per "
             "TP group), or auto (the least folding that keeps the run under 3 M ops)"},
        };
        add_stage_compression_params(table);
        add_gradient_compression_params(table);
        return table;
    }();
    return specs;
}

namespace {

bool given(const engine::Params& p, const char* name) { return p.location(name).file != "(default)"; }

struct Reader {
    const engine::Params& p;
    std::optional<engine::YamlValue> preset;

    // The user's value; else the preset's; else `fallback` (0: the key is required).
    std::uint32_t dim(const char* name, std::uint32_t fallback, std::int64_t max = 1 << 24) const {
        std::int64_t v = p.integer(name);
        if (!given(p, name) || v == 0) {
            if (preset && preset->find(name)) {
                const auto pv = preset->require(name);
                v = pv.as_int();
            } else {
                v = fallback;
            }
            if (v == 0) p.fail(name, fmt::format("'{}' is required when the model preset does not give it", name));
        }
        if (v < 1 || v > max) p.fail(name, fmt::format("expected an integer from 1 to {}, got {}", max, v));
        return static_cast<std::uint32_t>(v);
    }
    // Like dim, for counts where 0 is a value (-1 or unset: the preset's).
    std::uint32_t count(const char* name, std::int64_t unset, std::uint32_t fallback) const {
        std::int64_t v = p.integer(name);
        if (!given(p, name) || v == unset) v = preset && preset->find(name) ? preset->require(name).as_int() : fallback;
        if (v < 0 || v > (1 << 20)) p.fail(name, fmt::format("expected an integer from 0 to 1048576, got {}", v));
        return static_cast<std::uint32_t>(v);
    }
    std::string text(const char* name, const char* fallback) const {
        if (given(p, name) && !p.string(name).empty()) return p.string(name);
        if (preset && preset->find(name)) return preset->require(name).as_string();
        return fallback;
    }
    std::uint32_t positive(const char* name, std::int64_t max) const {
        const auto v = p.integer(name);
        if (v < 1 || v > max) p.fail(name, fmt::format("expected an integer from 1 to {}, got {}", max, v));
        return static_cast<std::uint32_t>(v);
    }
};

TransformerModel read_model(const Reader& r) {
    TransformerModel m;
    m.name = r.p.string("model");
    m.layers = r.dim("layers", 0, 1 << 16);
    m.hidden = r.dim("hidden", 0, 1 << 20);
    m.heads = r.dim("heads", 0, 1 << 16);
    m.kv_heads = r.dim("kv_heads", m.heads, 1 << 16);
    m.ffn_hidden = r.dim("ffn_hidden", 4 * m.hidden, 1 << 22);
    m.vocab = r.dim("vocab", 0, 1 << 24);
    m.seq_len = r.dim("seq_len", 0, 1 << 24);
    const std::string ffn = r.text("ffn", "gelu");
    if (ffn != "gelu" && ffn != "swiglu") r.p.fail("ffn", fmt::format("expected gelu or swiglu, got \"{}\"", ffn));
    m.ffn = ffn == "swiglu" ? FfnKind::swiglu : FfnKind::gelu;
    const std::string tie = r.text("tie_embeddings", "false");
    if (tie != "true" && tie != "false")
        r.p.fail("tie_embeddings", fmt::format("expected true or false, got \"{}\"", tie));
    m.tie_embeddings = tie == "true";
    if (m.hidden % m.heads != 0)
        r.p.fail("heads", fmt::format("{} heads do not divide the hidden size {}", m.heads, m.hidden));
    if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
        r.p.fail("kv_heads", fmt::format("{} key/value heads do not divide the {} heads", m.kv_heads, m.heads));
    m.experts = r.count("experts", 0, 0);
    if (m.experts > 0) {
        m.top_k = r.dim("top_k", 1, m.experts);
        m.moe_ffn_hidden = r.dim("moe_ffn_hidden", m.ffn_hidden, 1 << 22);
        m.moe_every = r.dim("moe_every", 1, 1 << 16);
        m.shared_experts = r.count("shared_experts", -1, 0);
        m.dense_layers = r.count("dense_layers", -1, 0);
        if (m.dense_layers >= m.layers)
            r.p.fail("dense_layers", fmt::format("{} dense layers leave no MoE layer of {}", m.dense_layers, m.layers));
    }
    return m;
}

std::array<GridDim, 4> read_rank_order(const engine::Params& p) {
    std::array<GridDim, 4> order{};
    std::size_t n = 0;
    bool seen[4] = {};
    const std::string& text = p.string("rank_order");
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find('-', start), text.size());
        const std::string token = text.substr(start, end - start);
        start = end + 1;
        if (token == "ep") continue;  // expert groups are consecutive data-parallel ranks
        GridDim dim = GridDim::tp;
        if (token == "cp")
            dim = GridDim::cp;
        else if (token == "dp")
            dim = GridDim::dp;
        else if (token == "pp")
            dim = GridDim::pp;
        else if (token != "tp")
            p.fail("rank_order", fmt::format("unknown dimension '{}' in \"{}\" (expected tp, cp, ep, dp and pp joined "
                                             "by '-')",
                                             token, text));
        const auto k = static_cast<std::size_t>(dim);
        if (seen[k] || n == 4) p.fail("rank_order", fmt::format("'{}' appears twice in \"{}\"", token, text));
        seen[k] = true;
        order[n++] = dim;
    }
    if (n != 4) p.fail("rank_order", fmt::format("\"{}\" must name each of tp, cp, dp and pp once", text));
    return order;
}

void check_parallelism(const engine::Params& p, TransformerPlan& plan) {
    const TransformerModel& m = plan.model;
    if (m.heads % plan.tp != 0)
        p.fail("tp", fmt::format("tp {} does not divide the {} attention heads", plan.tp, m.heads));
    if (m.kv_heads % plan.tp != 0)
        p.fail("tp", fmt::format("tp {} does not divide the {} key/value heads", plan.tp, m.kv_heads));
    if (m.ffn_hidden % plan.tp != 0 || (m.experts > 0 && m.moe_ffn_hidden % plan.tp != 0))
        p.fail("tp", fmt::format("tp {} does not divide the MLP's inner size", plan.tp));
    if (!plan.stage_layers.empty()) {
        if (plan.virtual_stages > 1) p.fail("stage_layers", "stage_layers needs virtual_stages: 1");
        if (plan.stage_layers.size() != plan.pp)
            p.fail("stage_layers", fmt::format("expected {} layer counts (one per pipeline stage), got {}", plan.pp,
                                               plan.stage_layers.size()));
        std::uint64_t sum = 0;
        for (const std::uint32_t n : plan.stage_layers) sum += n;
        if (sum != m.layers)
            p.fail("stage_layers", fmt::format("the stages' layers add up to {}, not the model's {}", sum, m.layers));
    } else if (m.layers % (plan.pp * plan.virtual_stages) != 0)
        p.fail(plan.virtual_stages > 1 ? "virtual_stages" : "pp",
               fmt::format("pp {} x virtual_stages {} does not divide the {} layers", plan.pp, plan.virtual_stages,
                           m.layers));
    if (m.seq_len % (2 * plan.cp) != 0 && plan.cp > 1)
        p.fail("cp", fmt::format("cp {}: the sequence ({} tokens) must split into 2 x cp chunks", plan.cp, m.seq_len));
    if (plan.sequence_parallel && (std::uint64_t{plan.micro_batch_size} * m.seq_len / plan.cp) % plan.tp != 0)
        p.fail("sequence_parallel", "the tokens of a micro-batch on a CP rank do not split over tp");
}

void check_experts(const engine::Params& p, const TransformerPlan& plan) {
    const TransformerModel& m = plan.model;
    if (m.experts > 0) {
        if (plan.tp > 1 && !plan.sequence_parallel)
            p.fail("sequence_parallel",
                   "MoE layers with tp > 1 need sequence_parallel: true (as Megatron-LM requires)");
        if (m.experts % plan.ep != 0)
            p.fail("ep", fmt::format("ep {} does not divide the {} experts", plan.ep, m.experts));
        if ((plan.cp * plan.dp) % plan.ep != 0)
            p.fail("ep", fmt::format("ep {} does not divide cp x dp = {}", plan.ep, plan.cp * plan.dp));
    } else if (plan.ep != 1) {
        p.fail("ep", fmt::format("ep {} needs a mixture-of-experts model (experts > 0)", plan.ep));
    }
}

}  // namespace

std::vector<engine::ParamSpec> transformer_model_params() {
    static const char* const keys[] = {"model",       "layers", "hidden",         "heads",     "kv_heads",
                                       "ffn_hidden",  "vocab",  "seq_len",        "ffn",       "tie_embeddings",
                                       "experts",     "top_k",  "moe_ffn_hidden", "moe_every", "shared_experts",
                                       "dense_layers"};
    std::vector<engine::ParamSpec> out;
    for (const auto& spec : transformer_params()) {
        for (const char* k : keys)
            if (spec.name == k) out.push_back(spec);
    }
    return out;
}

namespace {
Reader model_reader(const engine::Params& p) {
    Reader r{p, std::nullopt};
    if (!p.string("model").empty()) {
        const ModelPreset* preset = find_model_preset(p.string("model"));
        if (!preset) {
            std::string known;
            for (const auto& m : model_presets()) known += (known.empty() ? "" : ", ") + m.name;
            p.fail("model", fmt::format("unknown model '{}' (known: {})", p.string("model"), known));
        }
        r.preset = engine::YamlValue::load_string(preset->yaml, "workloads/models/" + preset->name + ".yaml");
    }
    return r;
}
}  // namespace

TransformerModel read_transformer_model(const engine::Params& p) { return read_model(model_reader(p)); }

TransformerPlan read_transformer_plan(const engine::Params& p) {
    const Reader r = model_reader(p);
    TransformerPlan plan;
    plan.model = read_model(r);
    plan.tp = r.positive("tp", 1 << 12);
    plan.pp = r.positive("pp", 1 << 12);
    plan.virtual_stages = r.positive("virtual_stages", 1 << 10);
    plan.cp = r.positive("cp", 1 << 12);
    plan.ep = r.positive("ep", 1 << 16);
    plan.sequence_parallel = p.boolean("sequence_parallel");
    const auto schedule = traces::parse_pipeline_schedule(p.string("schedule"));
    if (!schedule) p.fail("schedule", fmt::format("expected gpipe or 1f1b, got \"{}\"", p.string("schedule")));
    plan.schedule = *schedule;
    if (plan.virtual_stages > 1 && plan.schedule != traces::PipelineSchedule::one_f_one_b)
        p.fail("virtual_stages", "model chunks (virtual_stages > 1) need the 1f1b schedule");
    const auto zero = p.integer("zero_stage");
    if (zero < 0 || zero > 3) p.fail("zero_stage", fmt::format("expected 0, 1, 2 or 3, got {}", zero));
    plan.zero_stage = static_cast<std::uint32_t>(zero);
    const std::string& recompute = p.string("recompute");
    if (recompute != "none" && recompute != "selective" && recompute != "full")
        p.fail("recompute", fmt::format("expected none, selective or full, got \"{}\"", recompute));
    plan.recompute = recompute == "full"        ? Recompute::full
                     : recompute == "selective" ? Recompute::selective
                                                : Recompute::none;
    const auto dtype = traces::parse_data_type(p.string("dtype"));
    if (!dtype ||
        (*dtype != traces::DataType::fp16 && *dtype != traces::DataType::bf16 && *dtype != traces::DataType::fp8))
        p.fail("dtype", fmt::format("expected fp16, bf16 or fp8, got \"{}\"", p.string("dtype")));
    plan.dtype = *dtype;
    plan.grad_bucket_bytes = p.bytes("grad_bucket");
    if (plan.grad_bucket_bytes == 0) p.fail("grad_bucket", "expected a positive size");
    plan.rank_order = read_rank_order(p);
    plan.capacity_factor = p.number("capacity_factor");
    if (!(plan.capacity_factor > 0 && plan.capacity_factor <= 64))
        p.fail("capacity_factor", "expected a factor in (0, 64]");
    plan.imbalance = p.number("moe_imbalance");
    if (!(plan.imbalance >= 1 && plan.imbalance <= 64)) p.fail("moe_imbalance", "expected a factor from 1 to 64");
    const std::string& attention = p.string("attention");
    if (attention != "flash" && attention != "standard")
        p.fail("attention", fmt::format("expected flash or standard, got \"{}\"", attention));
    plan.flash_attention = attention == "flash";
    plan.causal = p.boolean("causal");
    plan.optimizer = p.boolean("optimizer");
    plan.pp_compression = read_stage_compression(p, plan.pp);
    plan.dp_compression = read_gradient_compression(p);
    if (plan.dp_compression.on() && plan.zero_stage > 0)
        p.fail("dp_compression", "compresses the gradients' all-reduce buckets: it needs zero_stage 0");
    const std::string& fold = p.string("fold");
    if (fold != "auto" && fold != "none" && fold != "dp" && fold != "tp+dp")
        p.fail("fold", fmt::format("expected auto, none, dp or tp+dp, got \"{}\"", fold));
    plan.fold = fold == "none" ? Fold::none : fold == "dp" ? Fold::dp : fold == "tp+dp" ? Fold::tp_dp : Fold::automatic;
    plan.micro_batch_size = r.positive("micro_batch_size", 1 << 16);

    if (const std::string placement = p.string("placement"); placement != "even") {
        if (placement != "balanced")
            p.fail("placement", fmt::format("expected even or balanced, got \"{}\"", placement));
        p.fail("placement", "balanced is resolved by the scenario from the GPUs (run it from a scenario)");
    }
    if (const std::string layers = p.string("stage_layers"); !layers.empty()) {
        for (const std::string& item : engine::split_list(layers)) {
            char* end = nullptr;
            const long n = std::strtol(item.c_str(), &end, 10);
            if (item.empty() || *end != '\0' || n < 1 || n > (1 << 16))
                p.fail("stage_layers",
                       fmt::format("expected layer counts from 1 joined by ',' (\"10,14,14,10\"), got \"{}\"", layers));
            plan.stage_layers.push_back(static_cast<std::uint32_t>(n));
        }
    }
    check_parallelism(p, plan);
    const auto world = p.integer("world_size");
    if (world < 0 || world > (1 << 24)) p.fail("world_size", "expected a GPU count from 1 to 2^24");
    const std::uint64_t model_ranks = std::uint64_t{plan.tp} * plan.pp * plan.cp;
    if (p.string("dp") == "auto") {
        if (world == 0) p.fail("dp", "dp: auto needs world_size (given by the scenario's topology)");
        if (world % model_ranks != 0)
            p.fail("dp", fmt::format("world size {} is not a multiple of tp x pp x cp = {}", world, model_ranks));
        plan.dp = static_cast<std::uint32_t>(world / model_ranks);
    } else {
        const auto& text = p.string("dp");
        std::size_t used = 0;
        long long v = 0;
        try {
            v = std::stoll(text, &used);
        } catch (...) {
            used = 0;
        }
        if (used != text.size() || v < 1 || v > (1 << 24))
            p.fail("dp", fmt::format("expected auto or an integer from 1 to 16777216, got \"{}\"", text));
        plan.dp = static_cast<std::uint32_t>(v);
        if (given(p, "world_size") && std::uint64_t{plan.dp} * model_ranks != static_cast<std::uint64_t>(world))
            p.fail("dp", fmt::format("tp {} x pp {} x cp {} x dp {} = {} GPUs, but world_size is {}", plan.tp, plan.pp,
                                     plan.cp, plan.dp, plan.dp * model_ranks, world));
    }
    if (model_ranks * plan.dp > (1u << 24)) p.fail("dp", "more than 2^24 ranks");
    check_experts(p, plan);

    const std::uint64_t per_step = std::uint64_t{plan.micro_batch_size} * plan.dp;
    const auto gbs = p.integer("global_batch_size");
    if (gbs < 0 || gbs > (1ll << 32)) p.fail("global_batch_size", "expected a sequence count from 1 to 2^32");
    const std::uint64_t global = gbs == 0 ? per_step * plan.pp : static_cast<std::uint64_t>(gbs);
    if (global % per_step != 0)
        p.fail("global_batch_size", fmt::format("{} sequences do not split into micro-batches of {} over {} replicas",
                                                global, plan.micro_batch_size, plan.dp));
    plan.global_batch_size = static_cast<std::uint32_t>(global);
    plan.microbatches = static_cast<std::uint32_t>(global / per_step);
    if (plan.microbatches > (1u << 16)) p.fail("global_batch_size", "more than 65536 micro-batches per replica");
    if (plan.virtual_stages > 1 && plan.microbatches % plan.pp != 0)
        p.fail("virtual_stages",
               fmt::format("interleaving needs the micro-batches per replica ({}) in groups of pp ({})",
                           plan.microbatches, plan.pp));
    return plan;
}

}  // namespace clustersim::workloads
