// Which ranks a timeline shows. A run of tens of millions of ops writes gigabytes of trace-event JSON, which the
// Perfetto UI cannot open (it holds a trace in the browser's memory, typically 2 GB, and needs several times the
// trace's size: perfetto.dev/docs/visualization/large-traces), and writing it is a third of such a run's time. So
// past a budget of ops the timeline shows whole ranks: those the critical path crosses first (where the answer to
// "why is the step this long" is), in the order it crosses them, then the others in rank order, each while it fits.
#pragma once

#include <cstdint>
#include <vector>

#include "traces/op_graph.h"
#include "traces/run_summary.h"

namespace clustersim::traces {

struct TimelineRanks {
    std::vector<std::uint8_t> shown;  // by rank: 1 if its ops are in the timeline
    std::uint32_t ranks_shown = 0;
    std::uint64_t ops_shown = 0;
    [[nodiscard]] bool all(const OpGraph& graph) const { return ranks_shown == graph.rank_count; }
};

/// The ranks a timeline of at most `max_ops` ops shows (0: no limit). At least one rank is shown, the first the
/// critical path crosses (or rank 0), even if it alone has more ops.
TimelineRanks timeline_ranks(const OpGraph& graph, const CriticalPath& critical_path, std::uint64_t max_ops);

}  // namespace clustersim::traces
