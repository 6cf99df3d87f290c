// Repeating one iteration's graph, and when each iteration ended.
#include "traces/iterations.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/memory_budget.h"

namespace clustersim::traces {

OpGraph repeat_iterations(const OpGraph& graph, std::uint32_t iterations, const std::string& where) {
    if (iterations <= 1) return graph;
    if (!graph.iteration_starts.empty())
        throw engine::InputError(engine::SourceLocation{where}, "the graph already holds several iterations");
    const std::uint64_t n = graph.ops.size();
    if (n * iterations > max_repeated_ops)
        throw engine::InputError(
            engine::SourceLocation{where},
            fmt::format("{} iterations of {} ops are {} ops, beyond the {} a run holds; run fewer iterations",
                        iterations, n, n * iterations, max_repeated_ops));
    // The repeated graph and what a replay keeps per op (timings, readiness, matching: about 200 bytes in all).
    engine::require_memory(static_cast<double>(n * iterations) *
                               (200.0 + 4.0 * static_cast<double>(graph.op_deps.ids().size()) / std::max<double>(1, n)),
                           fmt::format("{} iterations of {} ops", iterations, n), "run fewer iterations", where);
    // Per stream: its first and last op in one iteration.
    std::vector<OpId> first(graph.streams.size(), OpId::invalid()), last(graph.streams.size(), OpId::invalid());
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t s = graph.ops[i].stream.index();
        if (!first[s].valid()) first[s] = OpId::from_index(i);
        last[s] = OpId::from_index(i);
    }
    // Per rank: the last op of each of its streams (those with ops), in stream order.
    std::vector<std::vector<OpId>> rank_last(graph.rank_count);
    for (std::size_t s = 0; s < graph.streams.size(); ++s)
        if (last[s].valid()) rank_last[graph.streams[s].rank.index()].push_back(last[s]);
    // From the second iteration on, each stream's first op also waits for its rank's last ones.
    std::size_t carried = 0;
    for (std::size_t s = 0; s < graph.streams.size(); ++s)
        if (first[s].valid()) carried += rank_last[graph.streams[s].rank.index()].size();

    OpGraph out = graph;
    out.ops.clear();
    out.op_deps.clear();
    out.durations.clear();
    out.ops.reserve(n * iterations);
    out.op_deps.reserve(n * iterations, (std::size_t{graph.op_deps.owner_count()} + graph.streams.size()) * iterations,
                        (graph.op_deps.ids().size() + carried) * iterations);
    out.iteration_starts.clear();
    std::vector<OpId> deps;
    for (std::uint32_t k = 0; k < iterations; ++k) {
        const auto shift = static_cast<std::uint32_t>(n * k);
        out.iteration_starts.push_back(shift);
        for (std::size_t i = 0; i < n; ++i) {
            const Op& op = graph.ops[i];
            deps.clear();
            for (const OpId d : graph.deps(OpId::from_index(i))) deps.push_back(OpId{d.value + shift});
            if (k > 0 && first[op.stream.index()].index() == i) {
                for (const OpId l : rank_last[graph.rank_of(op).index()])
                    deps.push_back(OpId{l.value + shift - static_cast<std::uint32_t>(n)});
            }
            out.add(op, deps, graph.duration(OpId::from_index(i)));
        }
    }
    out.derived.push_back(
        fmt::format("iterations: {} (each rank starts one when its streams finished the last)", iterations));
    return out;
}

std::vector<engine::Time> iteration_ends(const OpGraph& graph, const Timeline& timeline) {
    const std::uint32_t count = graph.iteration_count();
    std::vector<engine::Time> ends(count, engine::Time{0});
    for (std::uint32_t k = 0; k < count; ++k) {
        const std::size_t begin = graph.iteration_starts.empty() ? 0 : graph.iteration_starts[k];
        const std::size_t end = k + 1 < count ? graph.iteration_starts[k + 1] : graph.ops.size();
        for (std::size_t i = begin; i < end && i < timeline.size(); ++i) ends[k] = std::max(ends[k], timeline.ends[i]);
        if (k > 0) ends[k] = std::max(ends[k], ends[k - 1]);
    }
    return ends;
}

}  // namespace clustersim::traces
