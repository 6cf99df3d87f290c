// The transformer generator's input, checked: the model, the parallelism plan (TP/SP, PP with its schedule,
// CP, DP with a ZeRO stage, EP), batch sizes, recomputation and gradient bucketing. Reading it from the
// generator's parameters rejects impossible plans with errors located at the key at fault.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/params.h"
#include "traces/op_graph.h"
#include "traces/pipeline_schedule.h"
#include "workloads/compression.h"
#include "workloads/transformer/transformer_model.h"

namespace clustersim::workloads {

enum class Recompute : std::uint8_t { none, selective, full };

/// Symmetry reduction: which ranks are simulated. Data-parallel replicas (and the ranks of a TP group) run the
/// same ops, so one of them can stand for the others; groups reaching ranks not simulated become folded
/// communicators, timed by the replay's fold model (docs/models.md "Symmetry reduction").
enum class Fold : std::uint8_t { automatic, none, dp, tp_dp };
const char* recompute_name(Recompute r);

/// The four dimensions of the rank grid; expert parallelism is carved out of cp x dp.
enum class GridDim : std::uint8_t { tp, cp, dp, pp };

struct TransformerPlan {
    TransformerModel model;
    std::uint32_t tp = 1, pp = 1, virtual_stages = 1, cp = 1, dp = 1, ep = 1;
    bool sequence_parallel = false;
    traces::PipelineSchedule schedule = traces::PipelineSchedule::one_f_one_b;
    std::uint32_t zero_stage = 0;
    Recompute recompute = Recompute::none;
    std::uint32_t micro_batch_size = 1, global_batch_size = 1, microbatches = 1;  // microbatches per replica
    traces::DataType dtype = traces::DataType::bf16;
    std::uint64_t grad_bucket_bytes = 25u << 20;
    std::array<GridDim, 4> rank_order = {GridDim::tp, GridDim::cp, GridDim::dp, GridDim::pp};  // fastest first
    double capacity_factor = 1.0;  // MoE: expert capacity over the balanced load
    double imbalance = 1.0;        // MoE: the busiest rank's tokens over the balanced share
    bool flash_attention = true;
    bool causal = true;
    bool optimizer = true;
    Fold fold = Fold::automatic;
    StageCompression pp_compression;  // of the activations and gradients passed between stages
    Compression dp_compression;       // of the data-parallel gradient buckets
    /// Layers of each pipeline stage when they differ (heterogeneous stages; one chunk per stage); empty: the
    /// layers split evenly over pp x virtual_stages chunks.
    std::vector<std::uint32_t> stage_layers;

    [[nodiscard]] std::uint32_t world_size() const { return tp * pp * cp * dp; }
    [[nodiscard]] std::uint32_t layers_per_chunk() const { return model.layers / (pp * virtual_stages); }
    /// The first layer and the layer count of chunk `chunk` of pipeline stage `stage`.
    [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> chunk_layers(std::uint32_t chunk, std::uint32_t stage) const {
        if (stage_layers.empty()) return {(chunk * pp + stage) * layers_per_chunk(), layers_per_chunk()};
        std::uint32_t first = 0;
        for (std::uint32_t s = 0; s < stage; ++s) first += stage_layers[s];
        return {first, stage_layers[stage]};
    }
    /// The most layers any chunk holds.
    [[nodiscard]] std::uint32_t most_chunk_layers() const {
        std::uint32_t most = layers_per_chunk();
        for (const std::uint32_t n : stage_layers) most = std::max(most, n);
        return most;
    }
    /// Tokens of one micro-batch on one rank of a CP group.
    [[nodiscard]] double local_tokens() const { return double(micro_batch_size) * model.seq_len / cp; }
};

/// The generator's parameter specs (docs/formats.md lists them; a test checks the table against these). One
/// static table: Params keep pointers to its entries.
const std::vector<engine::ParamSpec>& transformer_params();
/// Reads and checks a plan; throws InputError at the key at fault.
TransformerPlan read_transformer_plan(const engine::Params& params);
/// The model keys of transformer_params() alone (model, layers, hidden, ...), for other generators of transformers.
std::vector<engine::ParamSpec> transformer_model_params();
/// The model a preset and the model keys give (parameters built from transformer_model_params()).
TransformerModel read_transformer_model(const engine::Params& params);

}  // namespace clustersim::workloads
