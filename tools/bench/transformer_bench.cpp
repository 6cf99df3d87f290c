// Transformer benchmark: generates one iteration of GPT-3 175B on 1,024 GPUs (TP 8, PP 16, DP 8, micro-batch 1,
// global batch 1,536, 1F1B) and simulates it contention-aware on 128 DGX A100 nodes. Prints generation ops/s
// against a baseline measured in the same run (appending the same number of ops to an OpGraph with no
// computation: the floor of graph building), and the end-to-end wall time and peak RSS of generate + simulate.
// Usage: bench_transformer [fold] (auto, none, dp or tp+dp; default auto).
#include <chrono>
#include <cstdio>
#include <string>

#include "engine/yaml_reader.h"
#include "sim/scenario/scenario.h"
#include "tools/bench/peak_rss.h"
#include "workloads/workload_registry.h"

using namespace clustersim;

namespace {
using bench::peak_rss_kib;
double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
const char* plan =
    "{generator: transformer, model: gpt3-175b, tp: 8, pp: 16, dp: 8, micro_batch_size: 1, "
    "global_batch_size: 1536, schedule: 1f1b, world_size: 1024, fold: %s}";
}  // namespace

int main(int argc, char** argv) {
    const std::string fold = argc > 1 ? argv[1] : "auto";
    char text[512];
    std::snprintf(text, sizeof text, plan, fold == "auto" ? "dp" : fold.c_str());
    // Generation alone, on one data-parallel replica (or the fold asked for): ops/s against the baseline.
    const auto& entry = workloads::find_workload_generator("transformer", engine::SourceLocation{"bench"});
    const auto params = engine::Params::from_yaml(engine::YamlValue::load_string(text, "bench"), entry.params);
    auto t0 = std::chrono::steady_clock::now();
    const traces::OpGraph g = entry.build(params);
    const double generate_s = since(t0);
    t0 = std::chrono::steady_clock::now();
    traces::OpGraph floor;
    floor.ops.reserve(g.ops.size());
    const traces::OpId dep[] = {traces::OpId{0}};
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        floor.add(g.ops[i], i ? std::span<const traces::OpId>(dep) : std::span<const traces::OpId>{},
                  g.duration(traces::OpId::from_index(i)));
    const double floor_s = since(t0);
    std::printf("transformer benchmark: GPT-3 175B, TP 8, PP 16, DP 8, 1F1B, 192 micro-batches per replica\n\n");
    std::printf(
        "generation (fold %s): %u of %u ranks, %zu ops in %.3f s = %.2f M ops/s; baseline (appending the "
        "same ops) %.3f s; ratio %.1f\n",
        fold == "auto" ? "dp" : fold.c_str(), g.rank_count, g.job_size(), g.ops.size(), generate_s,
        g.ops.size() / generate_s / 1e6, floor_s, generate_s / floor_s);
    // Generate and simulate, as `clustersim run` does.
    const std::string scenario_file =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/04-gpt3-175b-1024-a100/scenario.yaml";
    t0 = std::chrono::steady_clock::now();
    const auto scenario = sim::load_scenario(
        scenario_file, {"workload=" + std::string(text).replace(std::string(text).find("fold: "), std::string::npos,
                                                                "fold: " + fold + "}")});
    const auto result = sim::run_scenario(scenario);
    const double run_s = since(t0);
    std::printf(
        "generate + simulate (fold %s, contention-aware): %u of %u ranks, %zu ops, %llu flows, %.3f s wall, "
        "peak RSS %.0f MiB; iteration %.3f s, %.1f TFLOP/s per GPU, MFU %.1f%%\n",
        fold.c_str(), scenario.graph.rank_count, scenario.graph.job_size(), scenario.graph.ops.size(),
        static_cast<unsigned long long>(result.replay.flows), run_s, peak_rss_kib() / 1024.0,
        engine::to_seconds(result.summary.makespan), result.summary.training.tflops_per_gpu,
        100 * result.summary.training.mfu);
    return 0;
}
