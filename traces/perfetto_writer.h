// Perfetto / Chrome trace-event JSON of a replay: a process per rank and a thread per stream, slices for ops
// (waits shown as their own slices), flow arrows from each send to its recv, and counter tracks of the busiest
// links in a "network" process. Loads in ui.perfetto.dev and chrome://tracing.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "traces/op_graph.h"
#include "traces/timeline.h"

namespace clustersim::traces {

struct PerfettoOptions {
    std::vector<std::string> rank_labels;  // "n0.gpu3" per rank; empty: none
    std::size_t max_link_counters = 32;    // the links that carried the most bytes
    /// By rank: 1 if its ops are written (timeline_ranks.h); empty: every rank. A flow arrow is written when both
    /// its ends are; the network's tracks always are.
    std::vector<std::uint8_t> ranks_shown;
};

std::string perfetto_json(const OpGraph& graph, const Timeline& timeline, const PerfettoOptions& options);
/// The same text, written to `out` as it is made (for outputs too large to hold in memory).
void write_perfetto_json(std::ostream& out, const OpGraph& graph, const Timeline& timeline,
                         const PerfettoOptions& options);

/// Microseconds with exactly six decimals (picosecond precision), as trace-event "ts" wants.
std::string microseconds_text(engine::Time t);

}  // namespace clustersim::traces
