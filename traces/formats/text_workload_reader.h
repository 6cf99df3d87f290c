// The ASTRA-sim 1.0 text workload format and its SimAI / AICB descendant: a parallelism header, a layer count,
// then per layer the forward, input-gradient and weight-gradient compute times and collectives. Expanded into a
// per-rank OpGraph with tensor-, data-, expert- and pipeline-parallel communicators. Semantics: docs/formats.md.
#pragma once

#include <string>

#include "engine/time.h"
#include "traces/op_graph.h"

namespace clustersim::traces {

struct TextWorkloadOptions {
    std::uint32_t world_size = 0;  // 0: the header's all_gpus
    engine::Time time_unit{1000};  // one compute-time unit: 1 ns (SimAI's ns; ASTRA-sim's cycles at 1 GHz)
};

OpGraph read_text_workload(const std::string& path, const TextWorkloadOptions& options);

/// Whether `text` (the start of a file) looks like a text workload (its first word names a parallelism).
bool looks_like_text_workload(const std::string& text);

}  // namespace clustersim::traces
