// The ranks a timeline shows under a budget of ops (timeline_ranks.h).
#include "traces/timeline_ranks.h"

namespace clustersim::traces {

TimelineRanks timeline_ranks(const OpGraph& graph, const CriticalPath& critical_path, std::uint64_t max_ops) {
    TimelineRanks result;
    const std::uint32_t ranks = graph.rank_count;
    result.shown.assign(ranks, 0);
    std::vector<std::uint64_t> ops(ranks, 0);
    for (const Op& op : graph.ops) ++ops[graph.rank_of(op).index()];
    const auto show = [&](std::uint32_t r) {
        result.shown[r] = 1;
        ++result.ranks_shown;
        result.ops_shown += ops[r];
    };
    if (max_ops == 0 || graph.ops.size() <= max_ops) {
        for (std::uint32_t r = 0; r < ranks; ++r) show(r);
        return result;
    }
    // Candidates: the critical path's ranks in the order it first crosses them, then every rank in order.
    std::vector<std::uint32_t> order;
    order.reserve(ranks + critical_path.steps.size());
    for (const CriticalStep& step : critical_path.steps)
        order.push_back(graph.rank_of(graph.ops[step.op.index()]).value);
    for (std::uint32_t r = 0; r < ranks; ++r) order.push_back(r);
    for (const std::uint32_t r : order) {
        if (result.shown[r]) continue;
        if (result.ranks_shown > 0 && result.ops_shown + ops[r] > max_ops) continue;  // (a smaller one may fit)
        show(r);
    }
    return result;
}

}  // namespace clustersim::traces
