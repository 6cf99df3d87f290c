// Compression of the messages between pipeline stages (workloads/compression.h) in the pipeline and transformer
// generators, against closed forms: bytes per message for each codec and direction, the encode and decode
// kernels' traffic and dependencies, the residual's memory, the time the compression saves on a slow link with
// computation nearly free, and located errors.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/scenario/scenario.h"
#include "tests/workloads/generate.h"
#include "workloads/transformer/transformer_plan.h"
#include "workloads/workload_registry.h"

using namespace clustersim;
using traces::OpKind;

namespace {

traces::OpGraph build(const std::string& name, const std::string& yaml) { return testing::generate(name, yaml); }

// The ops whose name starts with `prefix`.
std::vector<traces::OpId> named(const traces::OpGraph& g, const std::string& prefix) {
    std::vector<traces::OpId> out;
    for (std::uint32_t i = 0; i < g.ops.size(); ++i)
        if (g.name(traces::OpId{i}).rfind(prefix, 0) == 0) out.push_back(traces::OpId{i});
    return out;
}

// Pipeline: 4 stages, 2 micro-batches of b = 2, s = 32, h = 64 in bf16: each activation is 2 x 32 x 64 x 2 bytes.
const std::string pipeline = R"(
generator: pipeline
pp: 4
microbatches: 2
layers_per_stage: 1
hidden: 64
seq_len: 32
micro_batch_size: 2
)";
constexpr double activation = 2.0 * 32 * 64 * 2;  // 8,192 bytes

}  // namespace

TEST_CASE("pipeline messages compress by codec and direction", "[workloads][compression]") {
    const auto plain = build("pipeline", pipeline);
    for (const traces::OpId op : named(plain, "send")) REQUIRE(plain.ops[op.index()].bytes() == 8192);
    REQUIRE(named(plain, "encode").empty());

    // Top-k of a quarter of the elements, both ways: each kept bf16 value with a 4-byte index, 8,192 x 0.25 x 6 / 2.
    const auto topk =
        build("pipeline", pipeline + "pp_compression: topk\npp_compression_ratio: 0.25\npp_compress: both\n");
    const auto sends = named(topk, "send");
    REQUIRE(sends.size() == 12);  // 3 boundaries x 2 micro-batches x 2 directions
    for (const traces::OpId op : sends) REQUIRE(topk.ops[op.index()].bytes() == 6144);
    for (const traces::OpId op : named(topk, "recv")) REQUIRE(topk.ops[op.index()].bytes() == 6144);
    const auto encodes = named(topk, "encode"), decodes = named(topk, "decode");
    REQUIRE(encodes.size() == 12);
    REQUIRE(decodes.size() == 12);
    for (const traces::OpId op : encodes) {
        // Reads the tensor and the residual, writes the message and the residual.
        REQUIRE(topk.ops[op.index()].bytes() == static_cast<std::uint64_t>(activation + 6144 + 2 * activation));
        REQUIRE(topk.ops[op.index()].kind == OpKind::compute);
    }
    for (const traces::OpId op : decodes) REQUIRE(topk.ops[op.index()].bytes() == 6144 + 8192);
    // Each send waits for its encode; each decode for its receive, on the receiver's compute stream.
    for (const traces::OpId send : sends) {
        const auto deps = topk.deps(send);
        REQUIRE(deps.size() == 1);
        REQUIRE(topk.name(deps[0]) == "encode" + topk.name(send).substr(4));
    }
    for (const traces::OpId decode : decodes) {
        const auto deps = topk.deps(decode);
        REQUIRE(deps.size() == 1);
        REQUIRE(topk.name(deps[0]) == "recv" + topk.name(decode).substr(6));
        REQUIRE(topk.streams[topk.ops[decode.index()].stream.index()].name == "compute");
    }

    // Quantization of the gradients only (the default direction), without error feedback.
    const auto grads =
        build("pipeline", pipeline + "pp_compression: quantize\npp_compression_ratio: 0.5\npp_error_feedback: false\n");
    for (const traces::OpId op : named(grads, "send act")) REQUIRE(grads.ops[op.index()].bytes() == 8192);
    for (const traces::OpId op : named(grads, "send grad")) REQUIRE(grads.ops[op.index()].bytes() == 4096);
    REQUIRE(named(grads, "encode act").empty());
    REQUIRE(named(grads, "encode grad").size() == 6);
    for (const traces::OpId op : named(grads, "encode grad")) REQUIRE(grads.ops[op.index()].bytes() == 8192 + 4096);
}

TEST_CASE("transformer stage messages compress, with the residuals in memory", "[workloads][compression]") {
    // 4 layers of h = 256 over 2 stages, s = 128, b = 1, bf16: a boundary message is 128 x 256 x 2 bytes.
    const std::string yaml = R"(
generator: transformer
layers: 4
hidden: 256
heads: 4
vocab: 1000
seq_len: 128
pp: 2
dp: 1
global_batch_size: 3
pp_compression: lowrank
pp_compression_ratio: 0.125
pp_compress: both
)";
    const auto g = build("transformer", yaml);
    constexpr std::uint64_t boundary = 128 * 256 * 2, sent = boundary / 8;
    const auto sends = named(g, "send");
    REQUIRE(sends.size() == 6);  // 3 micro-batches, one activation forward and one gradient back
    for (const traces::OpId op : sends) REQUIRE(g.ops[op.index()].bytes() == sent);
    REQUIRE(named(g, "encode").size() == 6);
    REQUIRE(named(g, "decode").size() == 6);
    for (const traces::OpId op : named(g, "encode"))
        REQUIRE(g.ops[op.index()].bytes() == boundary + sent + 2 * boundary);
    // One residual per compressed direction (2) and model chunk (1) on each rank.
    const auto residuals = named(g, "alloc compression residuals");
    REQUIRE(residuals.size() == 2);
    for (const traces::OpId op : residuals) REQUIRE(g.ops[op.index()].bytes() == 2 * boundary);
}

TEST_CASE("compressing the messages of a slow pipeline link saves their closed-form time", "[workloads][compression]") {
    // Example 01 reshaped: 2 stages on a 2-GPU ring of 1 GB/s links without latency, 1 micro-batch, fixed 1 ps
    // forward and backward. The iteration is the activation's transfer and the gradient's: 2 x bytes / 1 GB/s,
    // plus the encode and decode kernels (memory-bound, microseconds against milliseconds of transfer).
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";
    auto run = [&](std::vector<std::string> sets) {
        for (const char* s :
             {"topology={preset: ring, gpus: 2, bandwidth: 1 GB/s, latency: 0 ns}", "workload.pp=2", "workload.dp=1",
              "workload.microbatches=1", "workload.forward_time=1 ps", "workload.backward_time=1 ps",
              "workload.optimizer=false", "system.compute_slowdown_during_comm=0"})
            sets.emplace_back(s);
        return engine::to_seconds(sim::run_scenario(sim::load_scenario(path, sets)).replay.timeline.makespan);
    };
    // h 4096, s 2048, b 1, bf16: 16 MiB each way, over a ring link (NVLink-kind) at the H100's NCCL efficiency
    // of 0.824 (models.md "Collectives").
    const double message = 4096.0 * 2048 * 2, rate = 1e9 * 0.824;
    const double plain = run({});
    REQUIRE(plain == Approx(2 * message / rate).epsilon(1e-6));
    const double zipped = run({"workload.pp_compression=quantize", "workload.pp_compression_ratio=0.25",
                               "workload.pp_compress=both", "workload.pp_error_feedback=false"});
    // The messages take a quarter as long; the codec kernels add well under a millisecond on an H100.
    REQUIRE(zipped > 2 * 0.25 * message / rate);
    REQUIRE(zipped < 2 * 0.25 * message / rate + 1e-3);
}

TEST_CASE("stage compression rejects impossible plans at the key", "[workloads][compression]") {
    REQUIRE_THROWS_WITH(
        build("pipeline", std::string(pipeline).replace(pipeline.find("pp: 4"), 5, "pp: 1") + "pp_compression: topk\n"),
        Catch::Matchers::Contains("pp_compression") && Catch::Matchers::Contains("pp = 1 has none"));
    REQUIRE_THROWS_WITH(
        build("pipeline", pipeline + "pp_compression: zip\n"),
        Catch::Matchers::Contains("unknown pp_compression 'zip' (known: none, topk, quantize, lowrank)"));
    REQUIRE_THROWS_WITH(build("pipeline", pipeline + "pp_compression: topk\npp_compression_ratio: 0\n"),
                        Catch::Matchers::Contains("pp_compression_ratio") &&
                            Catch::Matchers::Contains("expected a fraction above 0 and up to 1"));
    REQUIRE_THROWS_WITH(
        build("pipeline", pipeline + "pp_compress: sideways\n"),
        Catch::Matchers::Contains("unknown direction 'sideways' (known: gradients, activations, both)"));
    REQUIRE_THROWS_WITH(
        build("transformer", "generator: transformer\nmodel: gpt3-1.3b\ndp: 1\npp_compression: quantize\n"),
        Catch::Matchers::Contains("pp = 1 has none"));
}

TEST_CASE("transformer gradient buckets compress, decoded after the backward", "[workloads][compression]") {
    // 4 layers of h = 256, 2 replicas, one bucket for all the gradients (bf16: 2 bytes per parameter), top-k of a
    // quarter of the elements: each kept bf16 value with a 4-byte index, 3/4 of the bucket's bytes.
    const std::string yaml = R"(
generator: transformer
layers: 4
hidden: 256
heads: 4
vocab: 1000
seq_len: 128
dp: 2
global_batch_size: 2
dp_compression: topk
dp_compression_ratio: 0.25
)";
    const auto g = build("transformer", yaml);
    std::uint32_t last_backward = 0, optimizer = 0, encodes = 0;
    std::vector<std::uint32_t> decodes;
    double grads = 0, sent = 0;
    for (std::uint32_t i = 0; i < g.ops.size(); ++i) {
        const auto& op = g.ops[i];
        if (g.rank_of(op).value != 0) continue;
        const std::string& name = g.names[op.name];
        if (name.find("backward") != std::string::npos) last_backward = i;
        if (name == "optimizer step") optimizer = i;
        if (name.rfind("encode dp grads", 0) == 0) {
            ++encodes;
            grads +=
                double(op.bytes());  // the encoder's traffic: the bucket, the residual read and written, the message
        }
        if (name.rfind("decode dp grads", 0) == 0) decodes.push_back(i);
        if (op.kind == OpKind::collective && op.collective == traces::CollectiveKind::all_gather)
            sent += double(op.bytes());
    }
    REQUIRE(encodes >= 1);
    REQUIRE(decodes.size() == encodes);
    for (const std::uint32_t d : decodes) {
        REQUIRE(d > last_backward);  // after every backward kernel, before the optimizer
        REQUIRE(d < optimizer);
    }
    // Encode traffic = bucket + message + 2 x bucket (error feedback) = bucket x (3 + 3/4).
    REQUIRE(sent == Approx(grads / (3 + 0.75) * 0.75));
    REQUIRE_THROWS_WITH(build("transformer", yaml + "zero_stage: 1\n"), Catch::Matchers::Contains("zero_stage 0"));
}
