// The ASTRA-sim 1.0 text workload format and its SimAI / AICB descendant: a parallelism header, a layer count,
// then per layer the forward, input-gradient and weight-gradient compute times and collectives. Expanded into a
// per-rank OpGraph with tensor-, data-, expert- and pipeline-parallel communicators. Semantics: docs/formats.md.
#pragma once

#include <string>

#include "engine/time.h"
#include "traces/formats/text_workload_file.h"
#include "traces/op_graph.h"
#include "traces/pipeline_schedule.h"

namespace clustersim::traces {

struct TextWorkloadOptions {
    std::uint32_t world_size = 0;  // 0: the header's all_gpus
    engine::Time time_unit{1000};  // one compute-time unit: 1 ns (SimAI's ns; ASTRA-sim's cycles at 1 GHz)
    /// Data-parallel replicas to simulate; the others are folded by symmetry (OpGraph::job_ranks). 0: all of
    /// them, or one when the whole job would expand to more than `max_ops` ops.
    std::uint32_t replicas = 0;
    /// SimAI / AICB conventions: an all-gather's size is its whole output (SimAI's busbw convention), not each
    /// rank's input (ASTRA-sim's).
    bool simai = false;
    /// Pipeline schedule, and model chunks per stage for interleaving (0: the header's vpp).
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    std::uint32_t chunks = 0;
    std::uint64_t max_ops = 20'000'000;
};

OpGraph read_text_workload(const std::string& path, const TextWorkloadOptions& options);

}  // namespace clustersim::traces
