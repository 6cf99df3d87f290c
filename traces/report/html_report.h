// The HTML report (report.html): one self-contained file (inline CSS and SVG, no script, no network access) with
// the run, where each rank's iteration goes, the critical path, the links over time, communication by group,
// memory per rank, and a what-if beside the faithful run. Sections and plots carry ids (docs/formats.md) so
// that tests and users can find them.
#pragma once

#include <string>
#include <vector>

#include "traces/op_graph.h"
#include "traces/run_summary.h"
#include "traces/timeline.h"

namespace clustersim::traces::report {

struct ReportRun {
    std::string label;                    // "faithful", "what-if: ..."
    const RunSummary* summary = nullptr;  // required
    const Timeline* timeline = nullptr;   // its link counters (may be null: no heatmap)
};

struct ReportOptions {
    std::string title;
    std::size_t max_rank_groups = 48;  // bars of the per-rank chart (ranks with identical breakdowns share one)
    std::size_t heatmap_links = 24;    // the links that carried the most bytes
};

/// The report of `runs` (the first is the run; a second is shown beside it as a what-if) on `graph`.
std::string html_report(const OpGraph& graph, const std::vector<ReportRun>& runs, const ReportOptions& options);

/// Ranks with identical breakdowns, in order of their first rank: the groups the per-rank chart shows (at most
/// `max_groups`: the outliers, the groups holding the most and least of each category, then the largest).
struct RankGroup {
    std::vector<std::uint32_t> ranks;
    const RankBreakdown* breakdown = nullptr;
};
std::vector<RankGroup> rank_groups(const RunSummary& summary, std::size_t max_groups);

}  // namespace clustersim::traces::report
