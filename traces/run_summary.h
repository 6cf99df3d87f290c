// The summary of a replay, as plain data: per-rank time breakdown, the most contended links and the critical
// path. Computed by sim/ (analysis), written by the summary writers here.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "engine/time.h"
#include "traces/op_graph.h"
#include "traces/timeline.h"

namespace clustersim::traces {

/// Where one rank's iteration time went. compute + exposed_communication + peer_wait + dependency_wait +
/// finished_early + idle_other == iteration (each instant is counted once, in that order of precedence).
struct RankBreakdown {
    std::uint32_t rank = 0;        // the job rank (with symmetry reduction, not the index among simulated ranks)
    engine::Time iteration{};      // makespan of the whole job
    engine::Time compute{};        // some compute kernel running
    engine::Time communication{};  // some transfer of this rank in progress (overlapped or not)
    engine::Time overlap{};        // compute and a transfer at once
    engine::Time exposed_communication{};  // a transfer and no compute
    engine::Time network_wait{};           // part of exposed communication lost to contention
    engine::Time peer_wait{};              // inside a collective, waiting for its members to arrive
    engine::Time dependency_wait{};        // in a send/recv waiting for the peer rank (pipeline bubble)
    engine::Time finished_early{};         // after this rank's last op, while others still run
    engine::Time idle_other{};             // nothing running or waited on (host gaps, local dependencies)
    bool operator==(const RankBreakdown&) const = default;
};

struct LinkReport {
    std::string name;
    double capacity_bytes_per_s = 0;
    double bytes = 0;
    double mean_utilization = 0;  // bytes / (capacity * makespan)
    double peak_utilization = 0;
    double contention_delay_s = 0;
    bool operator==(const LinkReport&) const = default;
};

struct CriticalStep {
    OpId op;
    engine::Time start{};
    engine::Time end{};
    bool operator==(const CriticalStep&) const = default;
};

struct CriticalPath {
    engine::Time compute{};
    engine::Time communication{};
    engine::Time copies{};
    engine::Time waiting{};           // gaps between an op's critical predecessor's end and its start
    std::vector<CriticalStep> steps;  // first to last
    bool operator==(const CriticalPath&) const = default;
};

/// Communication of one family of communicators ("tp", "dp", "ep", "pp", ...: a name up to its first '.' or
/// trailing digits), summed over every rank's calls in it.
struct GroupCommunication {
    std::string group;
    std::uint64_t ops = 0;        // collective and send/recv ops, all ranks
    std::uint64_t bytes = 0;      // their per-rank sizes, summed
    engine::Time waiting{};       // in a call waiting for peers (or for the peer to post)
    engine::Time transferring{};  // in a call with data moving
    bool operator==(const GroupCommunication&) const = default;
};

/// Peak memory of one rank (job rank) and what it holds at that instant, by MemoryUse.
struct RankMemory {
    std::uint32_t rank = 0;
    double peak_bytes = 0;
    std::array<double, memory_use_count> at_peak{};  // bytes by MemoryUse at the peak
    double hbm_bytes = 0;                            // capacity of the rank's GPU
    bool operator==(const RankMemory&) const = default;
};

/// Throughput of a generated training workload (all zero when the workload gives no model FLOPs).
struct TrainingMetrics {
    double model_flops_per_iteration = 0;     // whole job, no recomputation
    double hardware_flops_per_iteration = 0;  // FLOPs of every kernel run, recomputation included
    double tflops_per_gpu = 0;                // model FLOPs / iteration / GPUs, in TFLOP/s
    double hardware_tflops_per_gpu = 0;
    double mfu = 0;                // tflops_per_gpu over the GPU's dense peak for the workload's datatype
    double tokens_per_second = 0;  // whole job
    std::uint32_t gpus = 0;
    // Inference (0 for training): when the first output token exists, and the mean time of each later one.
    double time_to_first_token_s = 0;
    double time_per_output_token_s = 0;
    bool operator==(const TrainingMetrics&) const = default;
};

/// The collective calls of one communicator family, kind, algorithm and protocol (simulated runs; the report's
/// table, not written to summary.json).
struct CollectiveCalls {
    std::string group;  // communicator family, as GroupCommunication::group
    CollectiveKind kind = CollectiveKind::all_reduce;
    std::string algorithm;
    std::string protocol;  // "-" when no protocol was modelled
    std::uint32_t members = 0;
    std::uint64_t calls = 0;
    std::uint64_t bytes = 0;      // per call, per rank (the first member's size), mean
    engine::Time waiting{};       // per call: first member's arrival to the last's, mean
    engine::Time transferring{};  // per call: last arrival to the end, mean
    double busbw_gbps = 0;        // bytes x bus factor / transferring
    double nccl_model_us = 0;     // NCCL's predicted time per call, mean (0 when not modelled)
    bool operator==(const CollectiveCalls&) const = default;
};

/// A rank's presence on the critical path over several seeded samples of one run.
struct CriticalRank {
    std::uint32_t rank = 0;     // job rank
    std::uint32_t samples = 0;  // samples whose critical path ran through one of its ops
    double share = 0;           // its ops' part of the critical path's time, mean over all samples
    bool operator==(const CriticalRank&) const = default;
};

/// The distribution of iteration time over K seeded samples (each sample's iterations all counted).
struct SampleStats {
    std::uint32_t samples = 0;
    std::uint64_t first_seed = 0;               // sample k ran with seed first_seed + k
    std::vector<engine::Time> iteration_times;  // every iteration of every sample, sorted
    engine::Time p50{}, p90{}, p99{}, max{}, mean{};
    std::vector<CriticalRank> critical_ranks;  // most samples first, then largest share; at most 16
    bool operator==(const SampleStats&) const = default;
};

/// One pipeline stage: its ranks' GPUs and the busiest rank's compute (the slowest stage sets the pace).
struct StageReport {
    std::uint32_t stage = 0;
    std::uint32_t ranks = 0;  // simulated
    std::string gpus;         // the GPU types of its ranks, "A100-80GB" or "A100-80GB, H100"
    engine::Time compute{};   // most compute time of one of its ranks
    bool operator==(const StageReport&) const = default;
};

/// One job of several sharing a cluster: its time when they run together and when it runs alone on its GPUs.
struct JobReport {
    std::string name;
    std::string workload;
    std::uint32_t gpus = 0;
    engine::Time start{};
    engine::Time together{};  // its last op's end minus its start, with the other jobs
    engine::Time alone{};     // the same, alone on the cluster
    bool operator==(const JobReport&) const = default;
};

/// A link where jobs interfere: its contention delay together beyond the sum of the jobs' alone.
struct LinkInterference {
    std::string link;
    double together_s = 0;
    double alone_s = 0;  // summed over the jobs' runs alone
    bool operator==(const LinkInterference&) const = default;
};

struct RunSummary {
    std::string scenario;
    std::string topology;
    std::string workload;
    engine::Time makespan{};
    std::uint64_t ops = 0;
    std::uint64_t events = 0;
    std::uint64_t flows = 0;
    std::uint64_t bytes_on_network = 0;
    std::vector<RankBreakdown> ranks;
    std::vector<LinkReport> top_links;  // most contended first, at most 10
    CriticalPath critical_path;
    std::vector<GroupCommunication> communication;  // most time in calls first
    TrainingMetrics training;
    std::vector<RankMemory> memory;            // ranks with allocations, by rank; empty when the workload has none
    std::vector<CollectiveCalls> collectives;  // most time first (not in summary.json)
    /// Several iterations back to back: when each ended (empty for one iteration).
    std::vector<engine::Time> iteration_ends;
    SampleStats samples;                         // samples == 0 unless several seeded samples ran
    double cross_site_bytes = 0;                 // over WAN links (multi-site topologies)
    engine::Time cross_site_busy{};              // time some WAN link carried traffic
    std::vector<StageReport> stages;             // pipeline stages (generated pipelines), by stage
    std::vector<JobReport> jobs;                 // several jobs on one cluster (empty otherwise)
    std::vector<LinkInterference> interference;  // links where they interfere, most extra delay first
    std::vector<TimelineMarker> cluster_events;  // changes to the cluster during the run (system.events), by time
    bool operator==(const RunSummary&) const = default;
};

/// The mean iteration of a run of several back to back (the makespan when it ran one).
inline engine::Time mean_iteration(const RunSummary& s) {
    return s.iteration_ends.empty()
               ? s.makespan
               : engine::Time{s.makespan.count() / static_cast<std::int64_t>(s.iteration_ends.size())};
}

}  // namespace clustersim::traces
