// Scaling benchmark: the same work per GPU on ever larger clusters. From 128 GPUs (16 DGX-H100 nodes, rail-optimized)
// doubling to a maximum, each rank runs the replay benchmark's mix (compute kernels, tensor-parallel all-reduces in
// its node, data-parallel all-reduces along its rail within a fixed group of 16 nodes), so an ideal simulator's wall
// time grows linearly with the GPUs. Each size is run contention-aware (max-min, collectives as flows, classes of
// identical flows) and, as baselines in the same run, with cost-model collectives (no flows) and, up to a size,
// with routing by per-destination tables instead of two-level routing (the same routes, so the same simulated
// time). Prints a row per size and the exponent k of wall ~ GPUs^k fitted by least squares on log-log.
// Usage: bench_scaling [max GPUs, default 16384] [ops per rank, default 200] [max GPUs with tables, default 4096]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/replay/replay.h"
#include "tools/bench/peak_rss.h"
#include "tools/bench/replay_workload.h"
#include "topologies/topology_loader.h"

using namespace clustersim;

namespace {

double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// The slope of log(y) against log(x), by least squares.
double fitted_exponent(const std::vector<double>& x, const std::vector<double>& y) {
    const double n = static_cast<double>(x.size());
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double lx = std::log(x[i]), ly = std::log(y[i]);
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
    }
    const double d = n * sxx - sx * sx;
    return d > 0 ? (n * sxy - sx * sy) / d : 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::uint32_t max_gpus = argc > 1 ? static_cast<std::uint32_t>(std::stoul(argv[1])) : 16384;
    bench::ReplayWorkloadConfig config;
    config.ops_per_rank = argc > 2 ? static_cast<std::uint32_t>(std::stoul(argv[2])) : 200;
    config.dp_group_nodes = 16;
    const std::uint32_t max_tables = argc > 3 ? static_cast<std::uint32_t>(std::stoul(argv[3])) : 4096;
    std::printf(
        "scaling benchmark: %u ops per rank (1 in %u a collective, 1 in %u of those data-parallel over a group of %u "
        "nodes), dgx-h100 rail-optimized, 128 to %u GPUs\n\n",
        config.ops_per_rank, config.collective_every, config.dp_every, config.dp_group_nodes, max_gpus);
    std::printf(
        "| GPUs | ops | flows | events | contention-aware wall s (topology + replay) | ops/s | simulated | peak RSS "
        "MiB | bytes/op | baseline: cost-model collectives, wall s | ratio |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::vector<double> gpus, wall, baseline, tables_gpus, tables_wall;
    for (std::uint32_t n = 128; n <= max_gpus; n *= 2) {
        config.nodes = n / 8;
        const long rss_before = bench::peak_rss_kib();
        auto t0 = std::chrono::steady_clock::now();
        const auto cluster = topo::load_topology("dgx-h100", {"nodes=" + std::to_string(config.nodes)});
        const double topology_s = since(t0);
        const auto graph = bench::replay_workload(config);
        sim::ReplayOptions options;
        options.network.record_flows = false;
        options.network.record_link_utilization = false;
        options.link_counters = false;
        t0 = std::chrono::steady_clock::now();
        const auto exact = sim::replay(graph, cluster, options);
        const double exact_s = topology_s + since(t0);
        const long rss = bench::peak_rss_kib();
        options.collective_model = sim::ReplayOptions::CollectiveModel::cost_model;
        t0 = std::chrono::steady_clock::now();
        (void)sim::replay(graph, cluster, options);
        const double model_s = topology_s + since(t0);
        gpus.push_back(n);
        wall.push_back(exact_s);
        baseline.push_back(model_s);
        std::printf("| %u | %zu | %llu | %llu | %.2f (%.2f + %.2f) | %.0f | %.6f s | %.0f | %.0f | %.2f | %.1f |\n", n,
                    graph.ops.size(), static_cast<unsigned long long>(exact.flows),
                    static_cast<unsigned long long>(exact.events), exact_s, topology_s, exact_s - topology_s,
                    static_cast<double>(graph.ops.size()) / exact_s, engine::to_seconds(exact.timeline.makespan),
                    static_cast<double>(rss) / 1024,
                    rss > rss_before
                        ? static_cast<double>(rss - rss_before) * 1024 / static_cast<double>(graph.ops.size())
                        : 0.0,
                    model_s, exact_s / model_s);
        std::fflush(stdout);
    }
    // The reference routing, after the rows above so that its memory does not count in their peaks.
    std::printf(
        "\n| GPUs | routing by per-destination tables: wall s | simulated | peak RSS MiB (so far) | tables / two-level "
        "|\n|---|---|---|---|---|\n");
    for (std::uint32_t n = 128, row = 0; n <= std::min(max_tables, max_gpus); n *= 2, ++row) {
        config.nodes = n / 8;
        auto t0 = std::chrono::steady_clock::now();
        const auto cluster = topo::load_topology("dgx-h100", {"nodes=" + std::to_string(config.nodes)});
        const double topology_s = since(t0);
        const auto graph = bench::replay_workload(config);
        sim::ReplayOptions options;
        options.network.record_flows = false;
        options.network.record_link_utilization = false;
        options.network.two_level_routing = false;
        options.link_counters = false;
        t0 = std::chrono::steady_clock::now();
        const auto by_tables = sim::replay(graph, cluster, options);
        const double tables_s = topology_s + since(t0);
        tables_gpus.push_back(n);
        tables_wall.push_back(tables_s);
        std::printf("| %u | %.2f | %.6f s | %.0f | %.1f |\n", n, tables_s,
                    engine::to_seconds(by_tables.timeline.makespan), static_cast<double>(bench::peak_rss_kib()) / 1024,
                    tables_s / wall[row]);
        std::fflush(stdout);
    }
    if (gpus.size() >= 2)
        std::printf(
            "\nwall ~ GPUs^k: contention-aware k = %.3f (target k <= 1.2); cost-model collectives k = %.3f; with "
            "routing tables k = %.3f (to %u GPUs)\n",
            fitted_exponent(gpus, wall), fitted_exponent(gpus, baseline), fitted_exponent(tables_gpus, tables_wall),
            tables_gpus.empty() ? 0 : static_cast<unsigned>(tables_gpus.back()));
    return 0;
}
