// Analysis of traced timelines without simulating them (`clustersim analyze`), in the terms of Meta's Holistic
// Trace Analysis where it defines them (docs/formats.md "analyze" gives each definition and where it departs):
// temporal breakdown, communication-computation overlap, idle time by cause, kernel breakdown, launch delays,
// queue length per stream, stragglers at collectives, and a per-communicator table with achieved bus bandwidth.
// Also the same per-rank partition the simulation reports (RankBreakdown), so a trace and its replay can be held
// side by side.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/time.h"
#include "traces/formats/kineto_reader.h"
#include "traces/run_summary.h"

namespace clustersim::traces::analysis {

using engine::Time;

/// What a GPU event is, for the breakdowns: HTA's compute, communication and memory kernels.
enum class KernelKind : std::uint8_t { compute, communication, memory };
const char* kernel_kind_name(KernelKind kind);

struct AnalysisOptions {
    KinetoOptions kineto;                // which iteration, clock alignment, extra communication kernels
    Time kernel_wait_threshold{30'000};  // HTA's consecutive_kernel_delay: 30 ns
    std::size_t top_kernels = 10;
};

/// One rank over its own kernel span (first kernel start to last kernel end), HTA's temporal breakdown: idle +
/// compute + non_compute == span; and its overlap: communication time overlapped by compute / communication time.
struct RankTemporal {
    std::uint32_t rank = 0;
    Time span{}, idle{}, compute{}, non_compute{};
    Time communication{}, memory{}, communication_overlapped{};
    /// Idle by cause, summed over the rank's streams (HTA's idle time breakdown, per stream): host wait, kernel
    /// wait, other. Per stream they add up to the stream's gaps between kernels.
    Time host_wait{}, kernel_wait{}, other_wait{};
    [[nodiscard]] double overlap_fraction() const {
        return communication.count() > 0
                   ? static_cast<double>(communication_overlapped.count()) / static_cast<double>(communication.count())
                   : 0.0;
    }
};

struct KernelStat {
    std::string name;
    KernelKind kind = KernelKind::compute;
    std::uint64_t count = 0;
    Time total{}, max{};
};

/// Launch delay: a kernel's start minus the end of its CPU launch call (queueing on the GPU), over one rank.
struct LaunchStats {
    std::uint32_t rank = 0;
    std::uint64_t kernels = 0;  // with a launch record
    Time mean{}, p50{}, p95{}, max{};
};

/// Kernels launched and not finished on a stream: the largest count and its time-weighted mean over the span.
struct QueueStats {
    std::uint32_t rank = 0;
    std::int64_t stream = 0;
    std::uint32_t max = 0;
    double mean = 0;
};

/// Late arrival at collectives, on the shared clock: for each call matched across ranks (same group, same kind,
/// same position in the group's sequence), each member's lateness is its kernel start minus the earliest member's.
struct Straggler {
    std::uint32_t rank = 0;
    std::uint64_t calls = 0;
    Time total_lateness{}, max_lateness{};
    std::uint64_t last_to_arrive = 0;  // calls where it was the last member to start
};

struct CommunicatorStats {
    std::string group;  // process group name ("world" when the trace gives none)
    CollectiveKind kind = CollectiveKind::all_reduce;
    std::uint32_t ranks = 0;  // members (from the trace's group ranks, else the ranks that called it)
    std::uint64_t calls = 0;  // per rank
    std::uint64_t bytes = 0;  // per rank, summed over calls
    Time kernel_time{};       // per rank, summed over calls
    Time skew{};              // mean over calls of the last member's start minus the first's
    double busbw_gbps = 0;    // bytes x bus factor / kernel time (includes waiting inside the kernel)
};

struct TraceAnalysis {
    std::vector<RankTemporal> ranks;
    std::vector<KernelStat> kernels_by_kind;  // one per KernelKind, over all ranks
    std::vector<KernelStat> top_kernels;      // longest total first, over all ranks
    std::vector<LaunchStats> launches;
    std::vector<QueueStats> queues;
    std::vector<Straggler> stragglers;  // most total lateness first
    std::vector<CommunicatorStats> communicators;
    /// The partition the simulation reports, from the trace (traced_partition below).
    RunSummary summary;
};

/// Analyses the Kineto files (one rank each) on their shared clock.
TraceAnalysis analyze_kineto(const std::vector<std::string>& files, const AnalysisOptions& options);

}  // namespace clustersim::traces::analysis
