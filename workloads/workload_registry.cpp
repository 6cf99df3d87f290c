// The generator table, kept in alphabetical order.
#include "workloads/workload_registry.h"

#include <algorithm>

#include <fmt/format.h>

#include "workloads/transformer/transformer_plan.h"

namespace clustersim::workloads {

namespace {
using engine::ParamType;
std::vector<engine::ParamSpec> pipeline_params() {
    return {
        {"generator", ParamType::string, "pipeline", "this generator's name"},
        {"pp", ParamType::integer, "4", "pipeline stages"},
        {"dp", ParamType::integer, "1", "data-parallel replicas of the pipeline"},
        {"microbatches", ParamType::integer, "8", "micro-batches per iteration"},
        {"schedule", ParamType::string, "1f1b", "pipeline schedule: gpipe or 1f1b"},
        {"virtual_stages", ParamType::integer, "1",
         "model chunks per stage (Megatron's interleaved schedule; divides layers_per_stage, and pp divides "
         "microbatches)"},
        {"layers_per_stage", ParamType::integer, "4", "transformer layers on each stage"},
        {"hidden", ParamType::integer, "4096", "hidden size h"},
        {"seq_len", ParamType::integer, "2048", "sequence length s"},
        {"micro_batch_size", ParamType::integer, "1", "sequences per micro-batch b"},
        {"dtype", ParamType::string, "bf16", "datatype of weights, activations and gradients"},
        {"forward_time", ParamType::string, "",
         "fixed time of one micro-batch's forward on a stage (default: from FLOPs)"},
        {"backward_time", ParamType::string, "",
         "fixed time of one micro-batch's backward on a stage (default: 2x forward FLOPs)"},
        {"optimizer", ParamType::boolean, "true", "end with an optimizer step after the gradient all-reduce"},
    };
}
}  // namespace

const std::vector<GeneratorEntry>& workload_generators() {
    static const std::vector<GeneratorEntry> entries = {
        {"pipeline",
         "transformer layers split over pp pipeline stages (GPipe, 1F1B or interleaved 1F1B), replicated dp times "
         "with a per-layer "
         "gradient all-reduce overlapping the last backward",
         pipeline_params(), &build_pipeline_data_parallel, &pipeline_data_parallel_ranks},
        {"transformer",
         "a decoder-only transformer (dense or MoE) with Megatron-style TP/SP, PP (GPipe, 1F1B, interleaved), CP, "
         "DP with ZeRO 0-3 and EP; kernels from the model's shapes, memory as allocations",
         transformer_params(), &build_transformer},
    };
    return entries;
}

const GeneratorEntry& find_workload_generator(std::string_view name, const engine::SourceLocation& where) {
    const auto& all = workload_generators();
    const auto it = std::find_if(all.begin(), all.end(), [&](const GeneratorEntry& e) { return e.name == name; });
    if (it != all.end()) return *it;
    std::string known;
    for (const auto& e : all) known += (known.empty() ? "" : ", ") + e.name;
    throw engine::InputError(where, fmt::format("unknown workload generator '{}' (known: {})", name, known));
}

}  // namespace clustersim::workloads
