// The inference generator against closed forms: weights and KV cache per rank, the prefill's and each decode
// step's FLOPs, Megatron's two all-reduces per layer and pass, the first-token marker, and located errors.
#include <cmath>

#include <catch2/catch.hpp>

#include "tests/workloads/generate.h"

using namespace clustersim;
using traces::OpKind;

namespace {
traces::OpGraph generate(const std::string& yaml) { return testing::generate("inference", yaml); }
}  // namespace

TEST_CASE("inference: memory, FLOPs and collectives per pass meet the closed forms", "[workloads][inference]") {
    // Llama 3 8B (32 layers, h 4096, 32 heads, 8 KV heads of 128, SwiGLU 14336, vocab 128256), tp 2, pp 2.
    const auto g =
        generate("{generator: inference, model: llama3-8b, tp: 2, pp: 2, batch: 4, prompt_len: 1000, output_len: 10}");
    REQUIRE(g.rank_count == 4);
    const double h = 4096, kv_dim = 8 * 128, b = 4, width = 2, layers_per_stage = 16;
    double cache = 0, prefill_attention = 0, decode3_attention = 0;
    std::uint32_t all_reduces = 0;
    for (const auto& op : g.ops) {
        if (g.rank_of(op).value != 0) continue;  // stage 0, tensor rank 0
        const std::string& name = g.names[op.name];
        if (op.kind == OpKind::alloc && name == "alloc KV cache") cache = double(op.bytes());
        if (op.kind == OpKind::collective) ++all_reduces;
        if (name.find("attention") != std::string::npos && op.kind == OpKind::compute) {
            if (name.rfind("prefill ", 0) == 0) prefill_attention += op.flops();
            if (name.rfind("decode3 ", 0) == 0) decode3_attention += op.flops();
        }
    }
    REQUIRE(cache == 2 * b * (1000 + 10) * kv_dim / 2 * width * layers_per_stage);
    REQUIRE(all_reduces == 2 * 16 * 11);  // two per layer, 16 layers, prefill and 10 decode steps
    REQUIRE(prefill_attention == Approx(layers_per_stage * 2 * b * 1000.0 * 1000 * h / 2));  // causal
    REQUIRE(decode3_attention == Approx(layers_per_stage * 4 * b * 1003 * h / 2));           // 1,003 tokens so far
    // The first token: the prefill's logits on the last stage.
    REQUIRE(g.training.first_token_op < g.ops.size());
    REQUIRE(g.names[g.ops[g.training.first_token_op].name] == "prefill logits");
    REQUIRE(g.rank_of(g.ops[g.training.first_token_op]).value == 2);
    REQUIRE(g.training.tokens == b * 10);
    REQUIRE_THROWS_WITH(generate("{generator: inference, model: llama3-8b, tp: 3}"),
                        Catch::Matchers::Contains("tp 3 does not divide the 32 heads"));
    REQUIRE_THROWS_WITH(generate("{generator: inference, model: llama3-8b, ep: 2}"),
                        Catch::Matchers::Contains("expert parallelism needs a mixture-of-experts model"));
}

TEST_CASE("inference of a MoE model with expert parallelism meets the closed forms", "[workloads][inference]") {
    // Mixtral 8x7B (32 MoE layers of 8 SwiGLU experts of 14336, top 2; h 4096, 32 heads, 8 KV heads of 128, vocab
    // 32000), tp 2 x ep 2: two attention replicas of 2 ranks, each serving 2 of the 4 requests.
    const auto g =
        generate("{generator: inference, model: mixtral-8x7b, tp: 2, ep: 2, batch: 4, prompt_len: 100, output_len: 3}");
    REQUIRE(g.rank_count == 4);
    const double h = 4096, width = 2, layers = 32, experts = 8, top_k = 2, ranks = 4;
    const double expert = 3 * h * 14336;
    const double attention = h * 4096 + 2 * h * 1024 + 4096 * h;
    const double table = 32000 * h / 2;
    double weights = 0, cache = 0, prefill_flops = 0, decode2_bytes = 0, prefill_dispatch = 0;
    std::uint32_t dispatches = 0, combines = 0, expert_kernels = 0;
    for (const auto& op : g.ops) {
        if (g.rank_of(op).value != 0) continue;  // replica 0, tensor rank 0
        const std::string& name = g.names[op.name];
        if (name == "alloc weights") weights = double(op.bytes());
        if (name == "alloc KV cache") cache = double(op.bytes());
        if (op.kind == OpKind::collective && op.collective == traces::CollectiveKind::all_to_all) {
            if (name.find("dispatch") != std::string::npos) ++dispatches;
            if (name.find("combine") != std::string::npos) ++combines;
            if (name == "prefill layer0 dispatch") prefill_dispatch = double(op.bytes());
            REQUIRE(g.comms[op.comm().index()].ranks.size() == 4);  // the stage's ep x tp ranks
        }
        if (name.size() > 8 && name.compare(name.size() - 8, 8, " experts") == 0) {
            ++expert_kernels;
            if (name.rfind("prefill ", 0) == 0) prefill_flops += op.flops();
            if (name.rfind("decode2 ", 0) == 0) decode2_bytes += double(op.bytes());
        }
    }
    // Weights: per layer the attention and router over tp, a quarter of the experts; both tables (one stage).
    REQUIRE(weights ==
            std::floor(width * (layers * ((attention + h * experts) / 2 + experts * expert / ranks) + 2 * table)));
    REQUIRE(cache == 2 * 2 * (100 + 3) * 1024 / 2 * width * layers);  // the replica's 2 requests, over tp
    REQUIRE(dispatches == 32 * 4);                                    // every MoE layer, prefill and 3 decode steps
    REQUIRE(combines == dispatches);
    REQUIRE(expert_kernels == dispatches);
    // Prefill: the replica's 200 tokens over its 2 tensor ranks, top 2 each, h values of 2 bytes.
    REQUIRE(prefill_dispatch == 100 * top_k * h * width);
    // The stage's 400 tokens x top 2 over 4 ranks: 200 assignments of one expert's 2 x weights FLOPs, per layer.
    REQUIRE(prefill_flops == Approx(layers * 2 * 200 * expert));
    // A decode step: 4 tokens in the stage; an expert is hit with probability 1 - (1 - 2/8)^4; each rank reads
    // its quarter of the experts hit and the activations of its 2 assignments.
    const double hit = 1 - std::pow(0.75, 4);
    REQUIRE(decode2_bytes == Approx(layers * width * (experts * hit * expert / ranks + 4 * 2 * h)).epsilon(1e-12));
    // Model FLOPs: 2 per active weight (top 2 of 8 experts) per token.
    REQUIRE(g.training.model_flops ==
            Approx(2 * 4 * 103.0 * (32000 * h + layers * (attention + h * experts + top_k * expert))));
    REQUIRE_THROWS_WITH(generate("{generator: inference, model: mixtral-8x7b, ep: 16}"),
                        Catch::Matchers::Contains("ep x tp = 16 does not divide the 8 experts"));
    REQUIRE_THROWS_WITH(generate("{generator: inference, model: mixtral-8x7b, ep: 2, batch: 3}"),
                        Catch::Matchers::Contains("ep 2 does not divide the batch of 3 requests"));
}
