// Several jobs on one cluster (`jobs:` in a scenario): each its own workload on its own GPUs (a list, or a count
// placed by a policy), from its own start time. Their graphs are merged into one, whose flows share the links;
// each job is also run alone on the same GPUs, so the summary shows each job's time alone and together and the
// links where they interfere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/time.h"
#include "sim/replay/replay.h"
#include "topologies/cluster.h"
#include "traces/op_graph.h"
#include "traces/run_summary.h"

namespace clustersim::sim {

enum class Placement : std::uint8_t { packed, spread, random };

/// `count` free GPUs (indices into Cluster::gpus(); `used` marks taken ones and is updated): packed takes the
/// lowest-numbered free GPUs (filling nodes in order), spread one per node in turn (each node's lowest free GPU
/// first), random a seeded shuffle of the free GPUs. Throws InputError (naming `job`) when too few are free.
std::vector<std::uint32_t> place_job(const topo::Cluster& cluster, std::vector<std::uint8_t>& used, std::uint32_t count,
                                     Placement placement, std::uint64_t seed, const std::string& job);

/// One job of a multi-job scenario: its graph (one iteration), where it runs and when it starts.
struct Job {
    std::string name;
    std::string description;
    traces::OpGraph graph;
    std::vector<std::uint32_t> gpus;  // by job rank
    engine::Time start{};
};

/// Where a job sits in the merged graph.
struct JobSlice {
    std::string name;
    std::string description;
    std::uint32_t first_rank = 0, ranks = 0;
    std::vector<std::uint32_t> gpus;
    engine::Time start{};
    traces::OpGraph alone;  // the job's own graph, for its run alone
};

/// The jobs' graphs as one: ranks, streams and communicators renumbered (communicators prefixed "JOB/"), ops in job
/// order. Fills `slices`, `rank_to_gpu` and `rank_start`. Folded graphs (symmetry reduction) cannot be merged.
traces::OpGraph merge_jobs(const std::vector<Job>& jobs, std::vector<JobSlice>& slices,
                           std::vector<std::uint32_t>& rank_to_gpu, std::vector<engine::Time>& rank_start);

/// Each job's time together (from the merged run's timeline) and alone (a run of its own graph, same GPUs and
/// options), and the links whose contention delay grew when the jobs ran together (most first, at most 10).
void job_reports(const std::vector<JobSlice>& slices, const traces::OpGraph& merged, const traces::Timeline& together,
                 const topo::Cluster& cluster, const ReplayOptions& options, traces::RunSummary& summary);

}  // namespace clustersim::sim
