// The clients of federated rounds that miss the deadline (see round_deadline.h).
#include "sim/scenario/round_deadline.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace clustersim::sim {

LateClients late_clients(const traces::OpGraph& graph, const topo::Cluster& cluster, const ReplayOptions& options) {
    const ReplayResult probe = replay(graph, cluster, options);
    const traces::Timeline& tl = probe.timeline;
    LateClients out;
    std::vector<double> works;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> late;  // (round, rank), listed in that order
    for (const auto& c : graph.training.client_rounds) {
        const double work = engine::to_seconds(tl.ends[c.last_op] - tl.start(traces::OpId{c.first_op}));
        works.push_back(work);
        if (work > graph.training.round_deadline_s) late.emplace_back(c.round, c.rank);
    }
    std::sort(late.begin(), late.end());
    for (const auto& [round, rank] : late)
        out.late += fmt::format("{}{}:{}", out.late.empty() ? "" : ", ", round, rank);
    if (!works.empty()) {
        std::sort(works.begin(), works.end());
        out.median_s = works[(works.size() - 1) / 2];
        out.slowest_s = works.back();
    }
    return out;
}

}  // namespace clustersim::sim
