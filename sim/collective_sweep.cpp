// nccl-tests-like sweeps built as small OpGraphs and replayed.
#include "sim/collective_sweep.h"

#include <algorithm>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/ordered_parallel.h"

namespace clustersim::sim {

using traces::CollectiveKind;

namespace {

std::vector<std::uint64_t> sizes(const CollectiveSweepOptions& o) {
    if (o.min_bytes == 0 || o.max_bytes < o.min_bytes || !(o.factor > 1))
        throw engine::InputError("expected 0 < --min <= --max and --factor > 1");
    if (o.max_bytes > traces::Op::max_op_bytes)
        throw engine::InputError(
            fmt::format("--max: {} bytes is more than a collective op holds (2^48 - 2, 256 TiB)", o.max_bytes));
    std::vector<std::uint64_t> out;
    for (double s = static_cast<double>(o.min_bytes); s <= static_cast<double>(o.max_bytes) * (1 + 1e-9); s *= o.factor)
        out.push_back(static_cast<std::uint64_t>(s));
    return out;
}

engine::Time group_time(const ReplayResult& r, std::size_t group) {
    for (const auto& c : r.collectives) {
        if (c.comm.index() == group) return c.end - c.first_arrival;
    }
    return engine::Time{0};
}

}  // namespace

traces::OpGraph collective_graph(std::uint32_t ranks, const std::vector<std::vector<traces::RankId>>& groups,
                                 traces::CollectiveKind kind, std::uint64_t bytes) {
    traces::OpGraph g;
    g.rank_count = ranks;
    g.source = "collective sweep";
    for (std::size_t k = 0; k < groups.size(); ++k) {
        const auto comm = g.communicator(fmt::format("group{}", k), groups[k]);
        for (const traces::RankId r : groups[k]) {
            traces::Op op{g.stream(r, fmt::format("comm{}", k)), g.intern(traces::collective_kind_name(kind)),
                          traces::OpKind::collective};
            op.collective = kind;
            op.set_bytes(bytes);
            op.set_comm(comm);
            g.add(op);
        }
    }
    return g;
}

namespace {

/// The row of one size: NCCL's pick (or the forced algorithm) replayed, and with `compare` its alternatives.
CollectiveRow sweep_row(const topo::Cluster& cluster, const CollectiveSweepOptions& o,
                        const ReplayOptions& replay_options, std::uint64_t size) {
    const auto n = static_cast<std::uint32_t>(cluster.gpus().size());
    std::vector<traces::RankId> world;
    for (std::uint32_t r = 0; r < n; ++r) world.push_back(traces::RankId{r});
    const bool one_node = std::all_of(cluster.gpus().begin(), cluster.gpus().end(), [&](topo::DeviceId g) {
        return cluster.device(g).node == cluster.device(cluster.gpus().front()).node;
    });
    // nccl-tests sizes all_gather by its output; the op carries each rank's contribution.
    const std::uint64_t op_bytes = o.kind == CollectiveKind::all_gather ? std::max<std::uint64_t>(1, size / n) : size;
    const auto graph = collective_graph(n, {world}, o.kind, op_bytes);
    const ReplayResult r = replay(graph, cluster, replay_options);
    CollectiveRow row;
    row.bytes = o.kind == CollectiveKind::all_gather ? op_bytes * n : size;
    row.time = r.timeline.makespan;
    const double seconds = engine::to_seconds(row.time);
    row.algbw_gbps = seconds > 0 ? static_cast<double>(row.bytes) / seconds / 1e9 : 0;
    row.busbw_gbps = row.algbw_gbps * traces::bus_bandwidth_factor(o.kind, n);
    const CollectiveRecord& c = r.collectives.front();
    row.algorithm = collective_algorithms()[c.algorithm].name;
    row.protocol = c.modelled_protocol ? nccl_protocol_name(c.protocol) : "-";
    row.nccl_predicted_us = c.nccl_predicted_us;
    row.fastest_algorithm = row.algorithm;
    row.fastest_protocol = row.protocol;
    row.fastest_time = row.time;
    if (!o.compares()) return row;
    // NCCL's alternatives that have a form for the call, each simulated alone: the double tree and NVLS are for
    // all-reduce, NVLS inside one node (elsewhere they fall back to the ring, run already).
    for (const char* name : {"ring", "double_tree", "nvls"}) {
        // NCCL's pick forced is the same run (the best protocol for it is the pick's).
        if (row.algorithm == name) continue;
        if (std::string_view(name) != "ring" && o.kind != CollectiveKind::all_reduce) continue;
        if (std::string_view(name) == "nvls" && !one_node) continue;
        ReplayOptions forced = replay_options;
        forced.algorithm = find_collective_algorithm(name);
        forced.progress = {};
        const ReplayResult alt = replay(graph, cluster, forced);
        const CollectiveRecord& a = alt.collectives.front();
        if (alt.timeline.makespan < row.fastest_time) {
            row.fastest_time = alt.timeline.makespan;
            row.fastest_algorithm = collective_algorithms()[a.algorithm].name;
            row.fastest_protocol = a.modelled_protocol ? nccl_protocol_name(a.protocol) : "-";
        }
    }
    return row;
}

/// The replay options of a sweep's tasks: on several threads, without the progress reporter (it is not shared
/// between threads; the rows printed as they come are the progress).
ReplayOptions task_options(const CollectiveSweepOptions& o, std::size_t tasks) {
    ReplayOptions r = o.replay;
    if (o.threads > 1 && tasks > 1) r.progress = {};
    return r;
}

}  // namespace

std::vector<CollectiveRow> run_collective_sweep(const topo::Cluster& cluster, const CollectiveSweepOptions& o,
                                                RowSink sink) {
    const std::vector<std::uint64_t> all = sizes(o);
    const ReplayOptions replay_options = task_options(o, all.size());
    std::vector<CollectiveRow> rows;
    engine::run_ordered<CollectiveRow>(
        all.size(), o.threads, [&](std::size_t i) { return sweep_row(cluster, o, replay_options, all[i]); },
        [&](std::size_t, const CollectiveRow& row) {
            if (sink.row) sink.row(sink.context, row);
            rows.push_back(row);
        });
    return rows;
}

std::vector<ConcurrentRow> run_concurrent_sweep(const topo::Cluster& cluster, const CollectiveSweepOptions& o) {
    const auto n = static_cast<std::uint32_t>(cluster.gpus().size());
    std::map<std::int32_t, std::vector<traces::RankId>> by_node;
    for (std::uint32_t r = 0; r < n; ++r) by_node[cluster.device(cluster.gpus()[r]).node].push_back(traces::RankId{r});
    if (by_node.size() < 2)
        throw engine::InputError("--concurrent needs a topology of at least two nodes (try --set nodes=2)");
    std::vector<std::vector<traces::RankId>> tp, dp;
    for (const auto& [node, ranks] : by_node) tp.push_back(ranks);
    const std::size_t ppn = tp.front().size();
    for (std::size_t l = 0; l < ppn; ++l) {
        std::vector<traces::RankId> group;
        for (const auto& node : tp) {
            if (l < node.size()) group.push_back(node[l]);
        }
        dp.push_back(group);
    }
    const std::vector<std::uint64_t> all = sizes(o);
    const ReplayOptions replay_options = task_options(o, all.size());
    const auto compute = [&](std::size_t i) {
        const std::uint64_t size = all[i];
        ConcurrentRow row;
        row.bytes = size;
        auto slowest = [&](const ReplayResult& r, std::size_t first, std::size_t count) {
            engine::Time t{0};
            for (std::size_t k = first; k < first + count; ++k) t = std::max(t, group_time(r, k));
            return t;
        };
        row.tp_alone = slowest(replay(collective_graph(n, tp, o.kind, size), cluster, replay_options), 0, tp.size());
        row.dp_alone = slowest(replay(collective_graph(n, dp, o.kind, size), cluster, replay_options), 0, dp.size());
        std::vector<std::vector<traces::RankId>> both = tp;
        both.insert(both.end(), dp.begin(), dp.end());
        const ReplayResult together = replay(collective_graph(n, both, o.kind, size), cluster, replay_options);
        row.tp_together = slowest(together, 0, tp.size());
        row.dp_together = slowest(together, tp.size(), dp.size());
        return row;
    };
    std::vector<ConcurrentRow> rows;
    engine::run_ordered<ConcurrentRow>(all.size(), o.threads, compute,
                                       [&](std::size_t, const ConcurrentRow& row) { rows.push_back(row); });
    return rows;
}

}  // namespace clustersim::sim
