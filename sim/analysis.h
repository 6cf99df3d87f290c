// Analysis of a replay's Timeline: per-rank breakdown (compute, communication, overlap, exposed communication,
// waits by cause), the most contended links, and the critical path across ranks.
#pragma once

#include <span>

#include "traces/op_graph.h"
#include "traces/run_summary.h"
#include "traces/timeline.h"

namespace clustersim::sim {

/// A communicator's family: its name up to the first '.' without trailing digits ("tp.s0" and "tp3" are "tp"),
/// or the whole name when that leaves nothing or starts with a digit.
std::string communicator_family(const std::string& name);

/// Breakdown of `rank`, whose ops are `rank_ops`.
traces::RankBreakdown analyze_rank(const traces::OpGraph& graph, const traces::Timeline& timeline, traces::RankId rank,
                                   std::span<const traces::OpId> rank_ops);
std::vector<traces::LinkReport> most_contended_links(const traces::Timeline& timeline, std::size_t count);
traces::CriticalPath critical_path(const traces::OpGraph& graph, const traces::Timeline& timeline);
/// Time in communication ops by communicator family, most first (ties by name).
std::vector<traces::GroupCommunication> communication_by_group(const traces::OpGraph& graph,
                                                               const traces::Timeline& timeline);

/// All of the above in one summary (scenario, topology and workload names left to the caller).
/// The run's summary; the per-rank breakdowns on up to `threads` threads (each rank's its own: the same result on
/// any number).
traces::RunSummary summarize_run(const traces::OpGraph& graph, const traces::Timeline& timeline, unsigned threads = 1);

}  // namespace clustersim::sim

namespace clustersim::sim {

/// Traced against simulated time of the collectives of one kind, summed over all their calls and ranks. The
/// traced time is the NCCL kernel's (waiting for peers included); the simulated time in the call splits into
/// waiting for peers and transferring.
struct CollectiveComparison {
    traces::CollectiveKind kind = traces::CollectiveKind::all_reduce;
    std::size_t calls = 0;  // ops (one per rank per call)
    engine::Time traced{};
    engine::Time simulated_wait{};
    engine::Time simulated_transfer{};
};

/// One row per collective kind that has traced durations, in kind order.
std::vector<CollectiveComparison> compare_collectives(const traces::OpGraph& graph, const traces::Timeline& timeline);

}  // namespace clustersim::sim
