// The trace-import options `replay` and `convert` share (format, world size, Kineto's iteration, gaps and fill,
// the text workloads' replicas and pipeline schedule): one registration, one translation to ImportOptions.
#pragma once

#include <cstdint>
#include <string>

#include "traces/formats/trace_import.h"

namespace CLI {
class App;
}

namespace clustersim::cli {

struct ImportCliOptions {
    std::string format = "auto";
    std::uint32_t world_size = 0;
    int iteration = -1;
    bool drop_gaps = false;
    std::string fill = "spmd";
    std::string align = "auto";
    std::vector<std::string> comm_kernels;
    std::uint32_t replicas = 0;
    std::string schedule = "1f1b";
    std::uint32_t pipeline_chunks = 0;

    [[nodiscard]] traces::ImportOptions import_options() const;
};

/// Adds --format, --world-size, --iteration, --drop-gaps, --fill, --align, --replicas, --pipeline-schedule and
/// --pipeline-chunks to `command`, bound to `options`.
void add_import_options(CLI::App& command, ImportCliOptions& options);

}  // namespace clustersim::cli
