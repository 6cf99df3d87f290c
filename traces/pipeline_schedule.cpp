// Megatron's step numbering: forward step k runs chunk (k / stages) mod chunks of micro-batch
// (k / (stages x chunks)) x stages + k mod stages; backward step k the same micro-batch through the chunks in
// reverse order.
#include "traces/pipeline_schedule.h"

#include <algorithm>

#include "engine/error.h"

namespace clustersim::traces {

const char* pipeline_schedule_name(PipelineSchedule schedule) {
    return schedule == PipelineSchedule::gpipe ? "gpipe" : "1f1b";
}

std::optional<PipelineSchedule> parse_pipeline_schedule(std::string_view name) {
    if (name == "gpipe") return PipelineSchedule::gpipe;
    if (name == "1f1b") return PipelineSchedule::one_f_one_b;
    return std::nullopt;
}

std::vector<PipelineStep> pipeline_schedule(PipelineSchedule schedule, std::uint32_t stages, std::uint32_t stage,
                                            std::uint32_t micro_batches, std::uint32_t chunks) {
    CLUSTERSIM_CHECK(stages > 0 && stage < stages && chunks > 0, "bad pipeline shape");
    CLUSTERSIM_CHECK(chunks == 1 || micro_batches % stages == 0,
                     "interleaving needs the micro-batches in groups of the stage count");
    const std::uint32_t steps = micro_batches * chunks;
    auto step = [&](std::uint32_t k, bool forward) {
        const std::uint32_t group = stages * chunks;
        const std::uint32_t micro_batch = chunks == 1 ? k : (k / group) * stages + k % stages;
        const std::uint32_t chunk = (k / stages) % chunks;
        return PipelineStep{forward, micro_batch, forward ? chunk : chunks - 1 - chunk};
    };
    std::vector<PipelineStep> order;
    order.reserve(2 * steps);
    if (schedule == PipelineSchedule::gpipe) {
        for (std::uint32_t k = 0; k < steps; ++k) order.push_back(step(k, true));
        for (std::uint32_t k = 0; k < steps; ++k) order.push_back(step(k, false));
        return order;
    }
    const std::uint32_t warmup =
        std::min(steps, chunks == 1 ? stages - stage - 1 : (stages - stage - 1) * 2 + (chunks - 1) * stages);
    std::uint32_t f = 0, b = 0;
    for (; f < warmup; ++f) order.push_back(step(f, true));
    while (f < steps) {
        order.push_back(step(f++, true));
        order.push_back(step(b++, false));
    }
    while (b < steps) order.push_back(step(b++, false));
    return order;
}

}  // namespace clustersim::traces
