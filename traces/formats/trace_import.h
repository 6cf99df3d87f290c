// One entry point for every trace format clustersim reads: detection by content and import into an OpGraph.
// The table of formats lives here; each reader has its own file beside this one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "traces/formats/kineto_reader.h"
#include "traces/op_graph.h"
#include "traces/pipeline_schedule.h"

namespace clustersim::traces {

struct ImportOptions {
    std::string format = "auto";   // auto, native, kineto, simai (alias astra-text)
    std::uint32_t world_size = 0;  // kineto: SPMD fill; text workloads: when the header has no all_gpus
    std::optional<int> iteration;  // kineto: ProfilerStep#N
    bool keep_gaps = true;         // kineto: host gaps as delay ops
    bool fold = false;             // kineto: ranks without a file folded by symmetry instead of filled SPMD-style
    std::string align = "auto";    // kineto: auto, clock, step or none (KinetoAlign)
    std::vector<std::string> comm_kernels;  // kineto: extra name fragments of non-NCCL communication kernels
    std::uint32_t replicas = 0;  // text workloads: data-parallel replicas to simulate (0: all, if not too large)
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;  // text workloads
    std::uint32_t pipeline_chunks = 0;                          // text workloads: 0: the header's vpp
};

/// Format names for --format, "auto" first.
const std::vector<std::string>& trace_format_names();

/// "kineto", "chakra", "simai", "astra-text" or "native", from the first bytes of the file.
std::string detect_trace_format(const std::string& path);

/// The Kineto reader's options from the import options.
KinetoOptions kineto_options(const ImportOptions& options);

/// Reads the files in the given (or detected) format. Native and text workloads take exactly one file.
OpGraph import_traces(const std::vector<std::string>& files, const ImportOptions& options);

}  // namespace clustersim::traces
