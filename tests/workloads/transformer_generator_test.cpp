// The transformer generator against closed forms: FLOPs (one layer, the model, Megatron's formula with full
// recomputation), pipeline bubbles with free communication, TP/SP/EP/ZeRO-3 message counts and sizes, gradient
// buckets overlapping the backward pass, memory per ZeRO stage and recomputation mode, and located errors for
// impossible plans.
#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include "engine/memory_budget.h"
#include "engine/yaml_reader.h"
#include "sim/replay/replay.h"
#include "sim/scenario/scenario.h"
#include "topologies/topology_loader.h"
#include "traces/native_trace.h"
#include "workloads/transformer/transformer_costs.h"
#include "workloads/workload_registry.h"

using namespace clustersim;
using traces::CollectiveKind;
using traces::OpKind;

namespace {

engine::Params params(const std::string& yaml) {
    const auto doc = engine::YamlValue::load_string(yaml, "test.yaml");
    return engine::Params::from_yaml(doc, workloads::transformer_params());
}
traces::OpGraph generate(const std::string& yaml) { return workloads::build_transformer(params(yaml)); }
workloads::TransformerPlan plan_of(const std::string& yaml) { return workloads::read_transformer_plan(params(yaml)); }
bool close(double a, double b, double rel = 1e-9) {
    return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b));
}

// A GPT-like model small enough to simulate in milliseconds: h 1024, 16 heads, 8 layers, s 1024, V 4096.
const std::string small = "{layers: 8, hidden: 1024, heads: 16, vocab: 4096, seq_len: 1024, ";

double hardware_flops(const traces::OpGraph& g) {
    double f = 0;
    for (const auto& op : g.ops)
        if (op.kind == OpKind::compute) f += op.flops();
    return f;
}

sim::RunResult run_free(const std::string& workload, std::uint32_t gpus) {
    // Free communication: a ring of 1 PB/s links without latency, no protocol costs, no slowdown.
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";
    const auto scenario = sim::load_scenario(
        path, {"topology={preset: ring, gpus: " + std::to_string(gpus) + ", bandwidth: 1 PB/s, latency: 0 ns}",
               "workload=" + workload, "system.compute_slowdown_during_comm=0", "system.collective_protocol=none"});
    return sim::run_scenario(scenario);
}

}  // namespace

TEST_CASE("transformer FLOPs meet the closed forms", "[workloads][transformer]") {
    // One layer forward without causal masking: QKV 6 b s h^2, projection 2 b s h^2, MLP 16 b s h^2 (two GEMMs of
    // 2 b s h 4h), attention QK^T and AV 4 b s^2 h: 24 b s h^2 + 4 b s^2 h; causal masking halves attention.
    const double b = 2, s = 1024, h = 1024, L = 8, V = 4096;
    const auto dense = plan_of(small + "micro_batch_size: 2, causal: false, world_size: 1}");
    const auto c = workloads::layer_costs(dense, 0);
    REQUIRE(close(c.qkv.flops + c.attention.flops + c.projection.flops + c.mlp_in.flops + c.mlp_out.flops,
                  24 * b * s * h * h + 4 * b * s * s * h));
    const auto causal = workloads::layer_costs(plan_of(small + "micro_batch_size: 2, world_size: 1}"), 0);
    REQUIRE(close(causal.attention.flops, 2 * b * s * s * h));
    // The model: 6 N tokens + 12 L s h tokens, = 72 B s L h^2 (1 + s/6h + V/12hL); hardware FLOPs with full
    // recomputation are Megatron's 96 B s L h^2 (1 + s/6h + V/16hL).
    const auto g = generate(small +
                            "micro_batch_size: 2, global_batch_size: 4, causal: false, recompute: full, "
                            "tie_embeddings: true, world_size: 1}");
    const double B = 4;
    REQUIRE(close(g.training.model_flops, 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * h * L))));
    const auto m = dense.model;
    REQUIRE(close(g.training.model_flops, 6 * m.active_matmul_params() * B * s + 12 * L * s * h * B * s));
    REQUIRE(close(hardware_flops(g), 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * h * L))));
    REQUIRE(close(g.training.tokens, B * s));
    // Without recomputation hardware FLOPs equal model FLOPs (no causal masking).
    REQUIRE(close(hardware_flops(generate(small + "global_batch_size: 4, causal: false, world_size: 1}")),
                  g.training.model_flops));
}

TEST_CASE("pipeline bubbles meet (p-1)/(m+p-1) and (p-1)/(vm+p-1) with free communication",
          "[workloads][transformer]") {
    // 4 stages of 4 layers (2 chunks of 2 interleaved); the embedding, logits and loss are kept tiny (vocab 8).
    const std::uint32_t p = 4, m = 8;
    for (const auto& [schedule, chunks] : {std::pair{"gpipe", 1u}, {"1f1b", 1u}, {"1f1b", 2u}}) {
        INFO(schedule << " x" << chunks);
        const std::string w = fmt::format(
            "{{generator: transformer, layers: 16, hidden: 2048, heads: 16, vocab: 8, seq_len: 2048, pp: 4, dp: 1, "
            "global_batch_size: {}, schedule: {}, virtual_stages: {}, optimizer: false}}",
            m, schedule, chunks);
        const auto r = run_free(w, p);
        const auto& ranks = r.summary.ranks;
        const double iteration = engine::to_seconds(r.summary.makespan);
        const double expected = double(p - 1) / (chunks * m + p - 1);
        // A middle stage: its idle share is the bubble (the first and last have the tiny embedding and loss).
        const double idle = 1 - engine::to_seconds(ranks[1].compute) / iteration;
        REQUIRE(std::abs(idle - expected) < 0.01);
    }
}

TEST_CASE("TP, SP and EP collectives have the Megatron counts and sizes", "[workloads][transformer]") {
    const double b = 1, s = 1024, h = 1024, e = 2;
    auto count = [](const traces::OpGraph& g, CollectiveKind kind, const std::string& family, std::uint32_t rank,
                    std::uint64_t bytes) {
        std::size_t n = 0;
        for (const auto& op : g.ops)
            if (g.rank_of(op).value == rank && op.kind == OpKind::collective && op.collective == kind &&
                g.comms[op.comm().index()].name.rfind(family, 0) == 0) {
                REQUIRE(op.bytes() == bytes);
                ++n;
            }
        return n;
    };
    const auto tp =
        generate(small + "tp: 4, world_size: 4, global_batch_size: 2, optimizer: false}");  // 2 micro-batches
    REQUIRE(count(tp, CollectiveKind::all_reduce, "tp.", 0, std::uint64_t(b * s * h * e)) == 8 * 2 * 4);
    const auto sp =
        generate(small + "tp: 4, world_size: 4, global_batch_size: 2, sequence_parallel: true, optimizer: false}");
    REQUIRE(count(sp, CollectiveKind::all_reduce, "tp.", 0, 0) == 0);
    REQUIRE(count(sp, CollectiveKind::reduce_scatter, "tp.", 0, std::uint64_t(b * s * h * e)) == 8 * 2 * 4);
    REQUIRE(count(sp, CollectiveKind::all_gather, "tp.", 0, std::uint64_t(b * s * h * e / 4)) == 8 * 2 * 4);
    // EP: 8 experts, top 2, ep 4 over dp 4: 4 all-to-alls per MoE layer and micro-batch of top_k x tokens x h.
    const auto ep =
        generate(small + "experts: 8, top_k: 2, ep: 4, world_size: 4, global_batch_size: 4, optimizer: false}");
    REQUIRE(count(ep, CollectiveKind::all_to_all, "ep.", 0, std::uint64_t(2 * s * h * e)) == 8 * 1 * 4);
}

TEST_CASE("ZeRO-3 gathers every parameter once per pass and reduce-scatters every gradient",
          "[workloads][transformer]") {
    const auto plan = plan_of(small + "world_size: 4, zero_stage: 3, global_batch_size: 8}");
    const auto g = generate(small + "world_size: 4, zero_stage: 3, global_batch_size: 8, optimizer: false}");
    double gathered = 0, scattered = 0;
    for (const auto& op : g.ops) {
        if (g.rank_of(op).value != 0 || op.kind != OpKind::collective) continue;
        if (op.collective == CollectiveKind::all_gather) gathered += double(op.bytes()) * 4;  // contribution x members
        if (op.collective == CollectiveKind::reduce_scatter) scattered += double(op.bytes());
    }
    const double params = workloads::stage_params(plan, 0).total();
    const double passes = 2.0 * plan.microbatches;  // forward and backward of each micro-batch
    REQUIRE(close(gathered / passes, 2 * params, 1e-6));
    double layers = 0;
    for (std::uint32_t l = 0; l < 8; ++l) layers += workloads::layer_params_on_rank(plan, l).total();
    REQUIRE(close(scattered / plan.microbatches, 2 * layers, 1e-6));
}

TEST_CASE("gradient buckets overlap the backward pass; the last one is exposed", "[workloads][transformer]") {
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";
    const auto scenario = sim::load_scenario(
        path, {"topology={preset: dgx-h100, nodes: 1}",
               "workload={generator: transformer, layers: 8, hidden: 1024, heads: 16, vocab: 4096, seq_len: 1024, "
               "dp: 2, global_batch_size: 2, grad_bucket: 8 MiB, optimizer: false}"});
    const auto result = sim::run_scenario(scenario);
    const auto& g = scenario.graph;
    engine::Time first_reduce{-1}, last_reduce_end{}, last_backward_end{};
    std::size_t reduces = 0;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const auto& op = g.ops[i];
        if (g.rank_of(op).value != 0) continue;
        const auto& t = result.replay.timeline.timing(traces::OpId::from_index(i));
        if (op.kind == OpKind::collective && g.comms[op.comm().index()].name.rfind("dp.", 0) == 0) {
            if (first_reduce.count() < 0) first_reduce = t.start;
            last_reduce_end = std::max(last_reduce_end, t.end);
            ++reduces;
        } else if (op.kind == OpKind::compute) {
            last_backward_end = std::max(last_backward_end, t.end);
        }
    }
    REQUIRE(reduces > 2);  // 8 layers of 12.6 MB of gradients in 8 MiB buckets
    REQUIRE(first_reduce < last_backward_end);
    REQUIRE(last_reduce_end > last_backward_end);
}

TEST_CASE("memory per rank matches hand-computed bytes at each ZeRO stage and recomputation",
          "[workloads][transformer]") {
    // h 1024, 16 heads, 8 layers, s 1024, b 1, V 4096, tied, tp 1, pp 1, dp 2: P = 8 (12 h^2 + 2 h) + V h + h.
    const double h = 1024, s = 1024, V = 4096, L = 8, a = 16;
    const double P = L * (12 * h * h + 2 * h) + V * h + h;
    const double acts = L * 34 * s * h, logits = 4 * s * V;  // Korthikanti et al.: 34 s b h per layer (flash)
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";
    auto peak = [&](const std::string& extra) {
        const auto sc = sim::load_scenario(
            path, {"topology={preset: ring, gpus: 2, bandwidth: 1 TB/s, latency: 0 ns}",
                   "workload={generator: transformer, layers: 8, hidden: 1024, heads: 16, vocab: 4096, seq_len: 1024, "
                   "tie_embeddings: true, global_batch_size: 2" +
                       extra + "}"});
        REQUIRE(sc.memory.size() == 2);
        return sc.memory[0];
    };
    auto use = [](const traces::RankMemory& m, traces::MemoryUse u) { return m.at_peak[static_cast<std::size_t>(u)]; };
    using U = traces::MemoryUse;
    const auto z0 = peak("");
    REQUIRE(close(use(z0, U::parameters), 2 * P));
    REQUIRE(close(use(z0, U::gradients), 2 * P));
    REQUIRE(close(use(z0, U::optimizer_state), 12 * P));
    REQUIRE(close(use(z0, U::activations), acts));
    REQUIRE(close(use(z0, U::logits), logits));
    REQUIRE(close(z0.peak_bytes, 16 * P + acts + logits));
    REQUIRE(close(peak(", zero_stage: 1").peak_bytes, 4 * P + 6 * P + acts + logits));
    REQUIRE(close(peak(", zero_stage: 2").peak_bytes, 2 * P + P + 6 * P + acts + logits));
    const double layer = 12 * h * h + 2 * h;
    REQUIRE(close(peak(", zero_stage: 3").peak_bytes, P + P + 6 * P + 2 * 2 * layer + acts + logits));
    REQUIRE(close(use(peak(", recompute: full"), U::activations), L * 2 * s * h));
    REQUIRE(close(use(peak(", attention: standard"), U::activations), acts + L * 5 * a * s * s));
    REQUIRE(close(use(peak(", attention: standard, recompute: selective"), U::activations), acts));
}

TEST_CASE("impossible plans are located errors naming the key", "[workloads][transformer][input]") {
    using Catch::Matchers::Contains;
    REQUIRE_THROWS_WITH(generate(small + "tp: 3, world_size: 3}"),
                        Contains("tp") && Contains("does not divide the 16 attention heads"));
    REQUIRE_THROWS_WITH(generate(small + "kv_heads: 2, tp: 4, world_size: 4}"), Contains("key/value heads"));
    REQUIRE_THROWS_WITH(generate(small + "pp: 3, world_size: 3}"), Contains("does not divide the 8 layers"));
    REQUIRE_THROWS_WITH(generate(small + "pp: 2, virtual_stages: 3, world_size: 2}"), Contains("virtual_stages"));
    REQUIRE_THROWS_WITH(generate(small + "world_size: 6, tp: 4}"), Contains("not a multiple of tp x pp x cp"));
    REQUIRE_THROWS_WITH(generate(small + "world_size: 8, tp: 2, dp: 2}"), Contains("but world_size is 8"));
    REQUIRE_THROWS_WITH(generate(small + "experts: 6, ep: 4, world_size: 4}"),
                        Contains("ep 4 does not divide the 6 experts"));
    REQUIRE_THROWS_WITH(generate(small + "experts: 8, ep: 4, world_size: 2}"), Contains("does not divide cp x dp"));
    REQUIRE_THROWS_WITH(generate(small + "world_size: 4, global_batch_size: 6}"), Contains("global_batch_size"));
    REQUIRE_THROWS_WITH(generate(small + "model: gpt-5, world_size: 1}"), Contains("unknown model 'gpt-5'"));
    REQUIRE_THROWS_WITH(generate(small + "bogus: 1, world_size: 1}"), Contains("bogus"));
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"topology={preset: dgx-h100, nodes: 1}",
                                                  "workload={generator: transformer, model: gpt3-1.3b, dp: 16}"}),
                        Contains("the workload has 16 ranks but the topology"));
    REQUIRE_THROWS_WITH(
        sim::load_scenario(path, {"topology={preset: dgx-h100, nodes: 1}",
                                  "workload={generator: transformer, model: llama3-70b, global_batch_size: 8}"}),
        Contains("does not fit in GPU memory") && Contains("optimizer_state"));
    REQUIRE_NOTHROW(sim::load_scenario(
        path,
        {"topology={preset: dgx-h100, nodes: 1}",
         "workload={generator: transformer, model: llama3-70b, global_batch_size: 8}", "system.memory_check=warn"}));
}

TEST_CASE("every model preset builds and its parameter count matches the published size", "[workloads][transformer]") {
    const std::pair<const char*, double> published[] = {
        {"gpt3-1.3b", 1.3e9},   {"gpt3-6.7b", 6.7e9},   {"gpt3-13b", 13e9},       {"gpt3-175b", 175e9},
        {"llama2-7b", 6.7e9},   {"llama2-13b", 13e9},   {"llama2-70b", 69e9},     {"llama3-8b", 8.0e9},
        {"llama3-70b", 70.6e9}, {"llama3-405b", 405e9}, {"mixtral-8x7b", 46.7e9}, {"deepseek-v3", 671e9}};
    REQUIRE(workloads::model_presets().size() == std::size(published));
    for (const auto& [name, size] : published) {
        INFO(name);
        const auto plan = plan_of(std::string("{model: ") + name + ", world_size: 1}");
        // Within 6%: presets leave out biases and position embeddings, and DeepSeek-V3's attention is MHA here.
        REQUIRE(std::abs(plan.model.total_params() / size - 1) < 0.06);
    }
}

TEST_CASE("generated graphs round-trip through the native format with shapes, memory and training facts",
          "[workloads][transformer][traces]") {
    const auto g = generate(small + "tp: 2, pp: 2, world_size: 8, zero_stage: 3, global_batch_size: 4, fold: dp}");
    REQUIRE(g.rank_count == 4);
    REQUIRE(g.job_size() == 8);
    REQUIRE(!g.gemm_shapes.empty());
    const auto back = traces::parse_native_trace(traces::native_trace_text(g), "round-trip.json");
    REQUIRE(back.gemm_shapes == g.gemm_shapes);
    REQUIRE(back.ops.size() == g.ops.size());
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        INFO("op " << i << " " << g.describe(traces::OpId::from_index(i)));
        REQUIRE(back.ops[i] == g.ops[i]);
    }
    REQUIRE(back.training == g.training);
    REQUIRE(back.comms == g.comms);
    REQUIRE(traces::native_trace_text(back) == traces::native_trace_text(g));
}

TEST_CASE("folding replicas keeps the iteration of the whole job", "[workloads][transformer]") {
    // 2 nodes, TP 4, PP 2, DP 2: the folded run (one replica; DP collectives by the cost model) against all ranks.
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";
    auto run = [&](const char* fold) {
        return sim::run_scenario(sim::load_scenario(
            path,
            {"topology={preset: dgx-h100, nodes: 2}",
             std::string("workload={generator: transformer, model: gpt3-1.3b, tp: 4, pp: 2, global_batch_size: 8, "
                         "fold: ") +
                 fold + "}"}));
    };
    const auto whole = run("none"), folded = run("dp");
    REQUIRE(whole.summary.ranks.size() == 16);
    REQUIRE(folded.summary.ranks.size() == 8);
    const double a = engine::to_seconds(whole.summary.makespan), b = engine::to_seconds(folded.summary.makespan);
    REQUIRE(std::abs(b / a - 1) < 0.02);
    REQUIRE(close(whole.summary.training.hardware_flops_per_iteration,
                  folded.summary.training.hardware_flops_per_iteration));
}

TEST_CASE("a plan past the memory budget is refused before it is built, with its estimate",
          "[workloads][transformer]") {
    using Catch::Matchers::Contains;
    struct Budget {  // the run's budget, restored whatever happens
        std::uint64_t saved = engine::memory_budget();
        ~Budget() { engine::set_memory_budget(saved); }
    } restore;
    // 8 replicas of 64 micro-batches over 8 layers: at most about 0.2 M ops, about 30 MB.
    const std::string plan = small + "world_size: 8, global_batch_size: 512}";
    engine::set_memory_budget(10'000'000);
    REQUIRE_THROWS_WITH(generate(plan), Contains("workload: the plan (at most about 0.2 M ops: 8 simulated ranks x 64 "
                                                 "micro-batches x 8 layers per stage) needs about 29") &&
                                            Contains("--max-memory") && Contains("fold: tp+dp"));
    engine::set_memory_budget(100'000'000);
    const traces::OpGraph g = generate(plan);
    CHECK(g.rank_count == 8);
    CHECK(g.ops.size() < 196'608);  // the bound the check assumed: 0.6 of the rough count
}

TEST_CASE("kernels are named by layer and each name is interned once", "[workloads][transformer]") {
    // Names are kept by (name, layer) while the plan is built: the strings must be the full ones, once each.
    const auto g = generate(small +
                            "tp: 2, pp: 2, world_size: 4, global_batch_size: 4, recompute: full, "
                            "optimizer: false}");
    std::vector<std::string> sorted = g.names;
    std::sort(sorted.begin(), sorted.end());
    REQUIRE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
    const auto named = [&](std::uint32_t rank, const std::string& name) {
        std::size_t n = 0;
        for (const auto& op : g.ops) n += g.rank_of(op).value == rank && g.names[op.name] == name ? 1 : 0;
        return n;
    };
    // Rank 0 (stage 0: layers 0-3) runs 4 micro-batches: each layer's QKV forward, recomputed and backward.
    REQUIRE(named(0, "L0 qkv") == 4);
    REQUIRE(named(0, "L3 recompute qkv") == 4);
    REQUIRE(named(0, "L3 qkv backward") == 4);
    REQUIRE(named(0, "L4 qkv") == 0);  // stage 1's layer
    REQUIRE(named(2, "L4 qkv") == 4);  // (rank 2: tp 0 of stage 1)
}

TEST_CASE("tensor-parallel peers' ops are laid in turns and replay exactly as rank by rank",
          "[workloads][transformer][interleave]") {
    // 2 nodes, TP 4, PP 2, DP 2, every rank simulated: each TP group's four ranks take turns in the op list.
    const traces::OpGraph g =
        generate("{model: gpt3-1.3b, tp: 4, pp: 2, global_batch_size: 8, world_size: 16, fold: none}");
    REQUIRE(g.rank_count == 16);
    for (std::uint32_t i = 0; i < 8; ++i) REQUIRE(g.rank_of(g.ops[i]).value == i % 4);
    // The same graph rank by rank (each rank's ops in their order, dependencies remapped), as it was built.
    traces::OpGraph by_rank = g;
    std::vector<std::uint32_t> order(g.ops.size()), to_new(g.ops.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return g.rank_of(g.ops[a]).value < g.rank_of(g.ops[b]).value;
    });
    REQUIRE(!std::is_sorted(order.begin(), order.end()));
    for (std::uint32_t i = 0; i < order.size(); ++i) to_new[order[i]] = i;
    by_rank.ops.clear();
    by_rank.op_deps.clear();
    for (const std::uint32_t old : order) {
        std::vector<traces::OpId> deps;
        for (const traces::OpId d : g.deps(traces::OpId::from_index(old)))
            deps.push_back(traces::OpId::from_index(to_new[d.index()]));
        by_rank.add(g.ops[old], deps);
    }
    // Replayed contention-aware (collectives as flows) on the same cluster: every op starts and ends at the same
    // picosecond in both layouts.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    sim::ReplayOptions options;
    options.collective_model = sim::ReplayOptions::CollectiveModel::flows;
    const auto a = sim::replay(g, cluster, options), b = sim::replay(by_rank, cluster, options);
    REQUIRE(a.timeline.makespan == b.timeline.makespan);
    for (std::uint32_t i = 0; i < order.size(); ++i)
        REQUIRE(a.timeline.timing(traces::OpId::from_index(order[i])) ==
                b.timeline.timing(traces::OpId::from_index(i)));
}
