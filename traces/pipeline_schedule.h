// The order in which a pipeline stage runs its micro-batches' forwards and backwards: GPipe (all forwards, then
// all backwards), 1F1B (PipeDream-Flush / Megatron: a warm-up of forwards, then one forward and one backward in
// turn, then the remaining backwards), and Megatron's interleaved 1F1B over several model chunks per stage.
// Shared by the workload generators and the text-workload reader.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace clustersim::traces {

enum class PipelineSchedule : std::uint8_t { gpipe, one_f_one_b };

const char* pipeline_schedule_name(PipelineSchedule schedule);
std::optional<PipelineSchedule> parse_pipeline_schedule(std::string_view name);

/// One step of a stage: the forward or the backward of a micro-batch through one of the stage's model chunks
/// (chunk c of stage s holds virtual stage c x stages + s).
struct PipelineStep {
    bool forward = true;
    std::uint32_t micro_batch = 0;
    std::uint32_t chunk = 0;
    bool operator==(const PipelineStep&) const = default;
};

/// The steps of `stage` (of `stages`) for `micro_batches` micro-batches and `chunks` model chunks per stage.
/// Micro-batches enter in groups of `stages`, each group going through chunk 0, then chunk 1, ... (Megatron's
/// order); with several chunks, micro_batches must be a multiple of stages. 1F1B warms up with
/// min((stages - stage - 1) x 2 + (chunks - 1) x stages, all) forwards ((stages - stage - 1) with one chunk).
std::vector<PipelineStep> pipeline_schedule(PipelineSchedule schedule, std::uint32_t stages, std::uint32_t stage,
                                            std::uint32_t micro_batches, std::uint32_t chunks = 1);

}  // namespace clustersim::traces
