// PyTorch profiler (Kineto) Chrome-trace JSON, one file per rank, read into one OpGraph for the whole job.
// What is read and what is ignored: docs/formats.md ("Kineto").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "traces/op_graph.h"

namespace clustersim::traces {

struct KinetoOptions {
    std::optional<int> iteration;  // ProfilerStep#N to import; default: the first one in each file
    bool keep_gaps = true;         // keep the host's gaps between kernels on a stream as delay ops
    std::uint32_t world_size = 0;  // 0: from distributedInfo; ranks without a file are filled SPMD-style
    /// Ranks without a file: replayed as copies of the first given rank (SPMD fill), or, with `fold`, not
    /// simulated: the graph holds the given ranks only and folds the groups that reach the others (symmetry
    /// reduction, OpGraph::job_ranks).
    bool fold = false;
};

/// Reads the files (one rank each, gzip or not) into one graph of world_size ranks. Errors name the file and
/// the event.
OpGraph read_kineto(const std::vector<std::string>& files, const KinetoOptions& options);

/// Whether `text` (the start of a file) looks like a Kineto trace.
bool looks_like_kineto(const std::string& text);

}  // namespace clustersim::traces
