// Replay benchmark: a generated 1,024-rank graph of about a million ops (compute + collectives) on a
// rail-optimized DGX-H100 cluster. Prints wall time, ops and events per second, and peak memory per op, for
// the contention-aware and the contention-free network and the cost-model collectives in the same run
// (`bench_replay [nodes] [ops per rank] [mode]`: a mode runs alone when its name contains the third argument).
#include <chrono>
#include <cstdio>
#include <string>

#include "sim/replay/replay.h"
#include "tools/bench/peak_rss.h"
#include "tools/bench/replay_workload.h"
#include "topologies/topology_loader.h"

using namespace clustersim;

namespace {
using bench::peak_rss_kib;
}  // namespace

int main(int argc, char** argv) {
    bench::ReplayWorkloadConfig config;
    if (argc > 1) config.nodes = static_cast<std::uint32_t>(std::stoul(argv[1]));
    if (argc > 2) config.ops_per_rank = static_cast<std::uint32_t>(std::stoul(argv[2]));
    // An optional third argument runs only the modes whose name contains it (e.g. "classes"), for profiling.
    const std::string only = argc > 3 ? argv[3] : "";
    const long rss_start = peak_rss_kib();
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=" + std::to_string(config.nodes)});
    const auto graph = bench::replay_workload(config);
    const long rss_graph = peak_rss_kib();
    std::printf(
        "replay benchmark: %u ranks, %zu ops (1 in %u a collective, 1 in %u of those data-parallel), dgx-h100 x%u "
        "rail-optimized\n\n",
        graph.rank_count, graph.ops.size(), config.collective_every, config.dp_every, config.nodes);
    std::printf(
        "| network | wall s | ops/s | events | events/s | flows | flows in classes | classes split | simulated | "
        "flows/update | rates changed/update | calls in closed form | of them from records | calls repeated | "
        "restarts | peak RSS MiB | bytes/op (replay) |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    struct Mode {
        const char* name;
        sim::SharingModel sharing;
        sim::ReplayOptions::CollectiveModel collectives;
        bool classes = true;
        bool closed_form = false;  // ring calls alone on their links timed by formulas
        bool repeats = false;      // calls that repeat alone on their links timed from records
    };
    // The default mode's simulated time must be the one of every call as flows (the row before it).
    engine::Time as_flows{-1};
    double before_repeats = 0, repeat_speedup = 0;  // the closed-form row's wall time: the default's baseline
    for (const Mode mode :
         {Mode{"cost-model collectives", sim::SharingModel::max_min, sim::ReplayOptions::CollectiveModel::cost_model},
          Mode{"contention-free", sim::SharingModel::contention_free, sim::ReplayOptions::CollectiveModel::flows},
          Mode{"max-min, flows one by one", sim::SharingModel::max_min, sim::ReplayOptions::CollectiveModel::flows,
               false},
          Mode{"max-min, classes of identical flows", sim::SharingModel::max_min,
               sim::ReplayOptions::CollectiveModel::flows},
          Mode{"max-min, classes, calls in closed form", sim::SharingModel::max_min,
               sim::ReplayOptions::CollectiveModel::flows, true, true},
          Mode{"max-min, classes, closed forms, repeated calls from records (default)", sim::SharingModel::max_min,
               sim::ReplayOptions::CollectiveModel::flows, true, true, true}}) {
        if (!only.empty() && std::string(mode.name).find(only) == std::string::npos) continue;
        sim::ReplayOptions options;
        options.network.sharing = mode.sharing;
        options.network.flow_classes = mode.classes;
        options.collective_model = mode.collectives;
        options.closed_form = mode.closed_form;
        options.repeat_calls = mode.repeats;
        options.network.record_flows = false;
        options.network.record_link_utilization = false;
        options.link_counters = false;
        const auto t0 = std::chrono::steady_clock::now();
        const auto result = sim::replay(graph, cluster, options);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const long rss = peak_rss_kib();
        std::printf(
            "| %s | %.2f | %.0f | %llu | %.0f | %llu | %llu | %llu | %.6f s | %.1f | %.1f | %llu | %llu | %llu | %u | "
            "%.0f | %.0f |\n",
            mode.name, wall, static_cast<double>(graph.ops.size()) / wall,
            static_cast<unsigned long long>(result.events), static_cast<double>(result.events) / wall,
            static_cast<unsigned long long>(result.flows), static_cast<unsigned long long>(result.flows_in_classes),
            static_cast<unsigned long long>(result.classes_split), engine::to_seconds(result.timeline.makespan),
            result.rate_updates
                ? static_cast<double>(result.flows_reassigned) / static_cast<double>(result.rate_updates)
                : 0.0,
            result.rate_updates ? static_cast<double>(result.flows_rerated) / static_cast<double>(result.rate_updates)
                                : 0.0,
            static_cast<unsigned long long>(result.closed_form_calls),
            static_cast<unsigned long long>(result.closed_form_repeats),
            static_cast<unsigned long long>(result.repeated_calls), result.closed_form_restarts,
            static_cast<double>(rss) / 1024,
            static_cast<double>(rss - rss_graph) * 1024 / static_cast<double>(graph.ops.size()));
        std::fflush(stdout);
        if (mode.sharing == sim::SharingModel::max_min && mode.classes && !mode.closed_form &&
            mode.collectives == sim::ReplayOptions::CollectiveModel::flows)
            as_flows = result.timeline.makespan;
        if (mode.closed_form && as_flows.count() >= 0 && result.timeline.makespan != as_flows) {
            std::fprintf(stderr, "%s simulated %lld ps, every call as flows %lld ps\n", mode.name,
                         static_cast<long long>(result.timeline.makespan.count()),
                         static_cast<long long>(as_flows.count()));
            return 1;
        }
        if (mode.closed_form && !mode.repeats) before_repeats = wall;
        if (mode.repeats && before_repeats > 0) repeat_speedup = before_repeats / wall;
    }
    if (repeat_speedup > 0)
        std::printf(
            "\nrepeated calls from records: %.2fx the ops/s of calls in closed form alone (the row before, "
            "this run)\n",
            repeat_speedup);
    std::printf("\ngraph itself: %.0f bytes/op (peak RSS growth while generating it)\n",
                static_cast<double>(rss_graph - rss_start) * 1024 / static_cast<double>(graph.ops.size()));
    return 0;
}
