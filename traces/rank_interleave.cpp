// Ranks' ops interleaved (rank_interleave.h): the tail copied aside, then written back in turns, dependencies
// remapped.
#include "traces/rank_interleave.h"

#include <algorithm>
#include <span>

#include "engine/error.h"

namespace clustersim::traces {

void interleave_ranks(OpGraph& graph, std::size_t first, InterleaveScratch& scratch) {
    const std::size_t end = graph.ops.size();
    CLUSTERSIM_CHECK(first <= end && graph.op_deps.op_count() == end, "interleave_ranks: a graph of {} ops", end);
    // The ranks' runs.
    scratch.run_first.clear();
    scratch.run_size.clear();
    for (std::size_t i = first; i < end; ++i) {
        if (i == first || graph.rank_of(graph.ops[i]) != graph.rank_of(graph.ops[i - 1])) {
            scratch.run_first.push_back(static_cast<std::uint32_t>(i - first));
            scratch.run_size.push_back(0);
        }
        ++scratch.run_size.back();
    }
    const std::size_t runs = scratch.run_first.size();
    if (runs < 2) return;
    for (std::size_t r = 0; r < runs; ++r) {
        for (std::size_t q = 0; q < r; ++q)
            CLUSTERSIM_CHECK(graph.rank_of(graph.ops[first + scratch.run_first[q]]) !=
                                 graph.rank_of(graph.ops[first + scratch.run_first[r]]),
                             "interleave_ranks: rank {} has ops in two places",
                             graph.rank_of(graph.ops[first + scratch.run_first[r]]).value);
    }
    // The tail aside: its ops, and its dependencies (CSR by op of the tail).
    scratch.ops.assign(graph.ops.begin() + static_cast<std::ptrdiff_t>(first), graph.ops.end());
    const bool timed = !graph.durations.empty();
    if (timed)
        scratch.durations.assign(graph.durations.begin() + static_cast<std::ptrdiff_t>(first), graph.durations.end());
    scratch.dep_offsets.assign(1, 0);
    scratch.dep_ids.clear();
    for (std::size_t i = first; i < end; ++i) {
        const auto deps = graph.deps(OpId::from_index(i));
        scratch.dep_ids.insert(scratch.dep_ids.end(), deps.begin(), deps.end());
        scratch.dep_offsets.push_back(static_cast<std::uint32_t>(scratch.dep_ids.size()));
    }
    // Each op's new place: turn k takes op k of every rank that has one, in the runs' order.
    const std::uint32_t most = *std::max_element(scratch.run_size.begin(), scratch.run_size.end());
    scratch.to_new.resize(end - first);
    std::uint32_t next = 0;
    for (std::uint32_t k = 0; k < most; ++k) {
        for (std::size_t r = 0; r < runs; ++r) {
            if (k < scratch.run_size[r]) scratch.to_new[scratch.run_first[r] + k] = next++;
        }
    }
    // Written back in the new order.
    graph.op_deps.truncate(first);
    for (std::uint32_t k = 0, place = 0; k < most; ++k) {
        for (std::size_t r = 0; r < runs; ++r) {
            if (k >= scratch.run_size[r]) continue;
            const std::uint32_t old = scratch.run_first[r] + k;
            graph.ops[first + place] = scratch.ops[old];
            if (timed) graph.durations[first + place] = scratch.durations[old];
            // (Remapped in place: the tail's copy is read once.)
            const auto deps =
                std::span(scratch.dep_ids)
                    .subspan(scratch.dep_offsets[old], scratch.dep_offsets[old + 1] - scratch.dep_offsets[old]);
            for (OpId& dep : deps)
                if (dep.index() >= first) dep = OpId::from_index(first + scratch.to_new[dep.index() - first]);
            graph.op_deps.append(deps);
            ++place;
        }
    }
}

}  // namespace clustersim::traces
