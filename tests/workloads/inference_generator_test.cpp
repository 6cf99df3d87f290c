// The inference generator against closed forms: weights and KV cache per rank, the prefill's and each decode
// step's FLOPs, Megatron's two all-reduces per layer and pass, the first-token marker, and located errors.
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
        if (op.rank.value != 0) continue;  // stage 0, tensor rank 0
        const std::string& name = g.names[op.name];
        if (op.kind == OpKind::alloc && name == "alloc KV cache") cache = double(op.bytes);
        if (op.kind == OpKind::collective) ++all_reduces;
        if (name.find("attention") != std::string::npos && op.kind == OpKind::compute) {
            if (name.rfind("prefill ", 0) == 0) prefill_attention += op.flops;
            if (name.rfind("decode3 ", 0) == 0) decode3_attention += op.flops;
        }
    }
    REQUIRE(cache == 2 * b * (1000 + 10) * kv_dim / 2 * width * layers_per_stage);
    REQUIRE(all_reduces == 2 * 16 * 11);  // two per layer, 16 layers, prefill and 10 decode steps
    REQUIRE(prefill_attention == Approx(layers_per_stage * 2 * b * 1000.0 * 1000 * h / 2));  // causal
    REQUIRE(decode3_attention == Approx(layers_per_stage * 4 * b * 1003 * h / 2));           // 1,003 tokens so far
    // The first token: the prefill's logits on the last stage.
    REQUIRE(g.training.first_token_op < g.ops.size());
    REQUIRE(g.names[g.ops[g.training.first_token_op].name] == "prefill logits");
    REQUIRE(g.ops[g.training.first_token_op].rank.value == 2);
    REQUIRE(g.training.tokens == b * 10);
    REQUIRE_THROWS_WITH(generate("{generator: inference, model: llama3-8b, tp: 3}"),
                        Catch::Matchers::Contains("tp 3 does not divide the 32 heads"));
    REQUIRE_THROWS_WITH(generate("{generator: inference, model: mixtral-8x7b}"),
                        Catch::Matchers::Contains("mixture-of-experts"));
}
