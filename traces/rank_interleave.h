// Ops of ranks that run in step laid side by side: a graph's trailing ops, whole ranks one after the other,
// reordered so that the ranks' ops alternate (each rank's order and dependencies kept).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "traces/op_graph.h"

namespace clustersim::traces {

/// Buffers interleave_ranks reuses from one call to the next (a generator calls it once per group of ranks).
struct InterleaveScratch {
    std::vector<Op> ops;
    std::vector<engine::Time> durations;  // the tail's, when the graph keeps durations
    std::vector<std::uint32_t> dep_offsets;
    std::vector<OpId> dep_ids;
    std::vector<std::uint32_t> run_first, run_size;  // each rank's ops: where they start in the tail, how many
    std::vector<std::uint32_t> to_new;               // by place in the tail: the op's place after
};

/// Reorders the ops from `first` to the end, which are whole ranks' ops one rank after the other (each rank once,
/// its ops in stream order), so that the ranks take turns: every rank's first op, then every rank's second, and so
/// on (a rank with fewer ops drops out when it has none left). Each rank keeps the order of its ops, and each op its
/// dependencies (their ids remapped); a dependency on an earlier op of its own rank stays earlier. Ranks that run in
/// step (a tensor-parallel group) then have the ops they run at about the same time side by side: the replay reads
/// an op's record and run state as it starts and ends it, and reads them from the same cache lines for the group.
void interleave_ranks(OpGraph& graph, std::size_t first, InterleaveScratch& scratch);

}  // namespace clustersim::traces
