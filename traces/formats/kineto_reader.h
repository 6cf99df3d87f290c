// PyTorch profiler (Kineto) Chrome-trace JSON, one file per rank, read into one OpGraph for the whole job.
// What is read and what is ignored: docs/formats.md ("Kineto").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "traces/op_graph.h"

namespace clustersim::traces {

/// How the files of one job are placed on one time axis: by their shared clock (each file's timestamps as
/// recorded, so the ranks' start skew is kept), by their iteration's start (each rank's ProfilerStep at 0), or each
/// by its own earliest event. Automatic: clock when the files' first events lie within a minute of each other (one
/// job on synchronised host clocks), otherwise step.
enum class KinetoAlign : std::uint8_t { automatic, clock, step, none };

struct KinetoOptions {
    std::optional<int> iteration;  // ProfilerStep#N to import; default: the first one in each file
    bool keep_gaps = true;         // keep the host's gaps between kernels on a stream as delay ops
    std::uint32_t world_size = 0;  // 0: from distributedInfo; ranks without a file are filled SPMD-style
    /// Ranks without a file: replayed as copies of the first given rank (SPMD fill), or, with `fold`, not
    /// simulated: the graph holds the given ranks only and folds the groups that reach the others (symmetry
    /// reduction, OpGraph::job_ranks).
    bool fold = false;
    KinetoAlign align = KinetoAlign::automatic;
    /// Name fragments of communication kernels that are not NCCL's, besides the built-in ones (DeepEP, NVSHMEM,
    /// "all_to_all"/"alltoall" kernels): they are replayed as all-to-alls on the network, not as compute.
    std::vector<std::string> comm_kernels;
};

/// Reads the files (one rank each, gzip or not) into one graph of world_size ranks. Errors name the file and
/// the event.
OpGraph read_kineto(const std::vector<std::string>& files, const KinetoOptions& options);

/// Whether `text` (the start of a file) looks like a Kineto trace.
bool looks_like_kineto(const std::string& text);

}  // namespace clustersim::traces
