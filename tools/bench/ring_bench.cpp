// Ring benchmark: one 1 GiB ring all-reduce over every GPU of a rail-optimized DGX-H100 cluster, contention-aware
// (max-min, collectives as flows, NCCL's protocols and 8 channels: one ring per channel), as `clustersim
// collective` runs it (ring schedules, the channels folded by symmetry: ReplayOptions::fold_by_symmetry) and, as the
// baseline in the same run, with every channel's ring simulated (fold_by_symmetry off; with `listed`, also every
// transfer and dependency built before the call: ReplayOptions::ring_schedules off). Both must give the same
// simulated time; the bench stops with an error otherwise. Each run happens in a child process of its own (fork),
// so that its wall time and peak RSS are its own: neither the other run's memory nor its heap's state after it.
// Usage: bench_ring [largest node count, default 128; doubling from 16] [channels, default 8]
//        [largest node count with the baseline, default 128] [listed: the baseline from the listed plan]
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/collective_sweep.h"
#include "sim/collectives/collective_algorithm.h"
#include "tools/bench/peak_rss.h"
#include "topologies/topology_loader.h"

using namespace clustersim;

namespace {

struct Run {
    double wall_s = 0;
    long peak_rss_kib = 0;
    std::int64_t makespan_ps = 0;
    std::uint64_t events = 0;
    std::uint64_t flows = 0;
};

/// The replay in a child process: its figures come back through a pipe.
Run timed(const traces::OpGraph& graph, const topo::Cluster& cluster, const sim::ReplayOptions& options) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    const pid_t child = fork();
    if (child < 0) throw std::runtime_error("fork failed");
    if (child == 0) {
        close(fds[0]);
        const auto start = std::chrono::steady_clock::now();
        const sim::ReplayResult result = sim::replay(graph, cluster, options);
        Run run;
        run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        run.peak_rss_kib = bench::peak_rss_kib();
        run.makespan_ps = result.timeline.makespan.count();
        run.events = result.events;
        run.flows = result.flows;
        const bool sent = write(fds[1], &run, sizeof run) == static_cast<ssize_t>(sizeof run);
        _exit(sent ? 0 : 1);
    }
    close(fds[1]);
    Run run;
    const bool received = read(fds[0], &run, sizeof run) == static_cast<ssize_t>(sizeof run);
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    if (!received || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error("the replay's child process failed");
    return run;
}

}  // namespace

int main(int argc, char** argv) {
    const std::uint32_t max_nodes = argc > 1 ? static_cast<std::uint32_t>(std::stoul(argv[1])) : 128;
    const std::uint32_t channels = argc > 2 ? static_cast<std::uint32_t>(std::stoul(argv[2])) : 8;
    const std::uint32_t max_baseline = argc > 3 ? static_cast<std::uint32_t>(std::stoul(argv[3])) : 128;
    const bool listed = argc > 4 && std::string(argv[4]) == "listed";
    std::printf(
        "ring benchmark: 1 GiB ring all-reduce over every GPU, dgx-h100 rail-optimized, %u channels, "
        "contention-aware, NCCL's protocols\n\n",
        channels);
    std::printf(
        "| GPUs | channels folded: flows | events | wall s | peak RSS MiB | baseline, every ring%s: flows | "
        "wall s | peak RSS MiB | ratio | simulated |\n|---|---|---|---|---|---|---|---|---|---|\n",
        listed ? " from the listed plan" : "");
    for (std::uint32_t nodes = 16; nodes <= max_nodes; nodes *= 2) {
        const topo::Cluster cluster = topo::load_topology("dgx-h100", {"nodes=" + std::to_string(nodes)});
        const auto n = static_cast<std::uint32_t>(cluster.gpus().size());
        std::vector<traces::RankId> world;
        for (std::uint32_t r = 0; r < n; ++r) world.push_back(traces::RankId{r});
        const traces::OpGraph graph =
            sim::collective_graph(n, {world}, traces::CollectiveKind::all_reduce, std::uint64_t{1} << 30);
        sim::ReplayOptions options;
        options.algorithm = sim::find_collective_algorithm("ring");
        options.channels = channels;
        options.link_counters = false;  // as `clustersim collective`: no link utilization kept
        options.network.record_link_utilization = false;
        options.fold_by_symmetry = true;
        const Run folded = timed(graph, cluster, options);
        std::string base_flows = "-", base_wall = "-", base_rss = "-", ratio = "-";
        if (nodes <= max_baseline) {
            options.fold_by_symmetry = false;
            options.ring_schedules = !listed;
            const Run base = timed(graph, cluster, options);
            if (base.makespan_ps != folded.makespan_ps) {
                std::fprintf(stderr, "bench_ring: the folded and the unfolded call disagree at %u GPUs\n", n);
                return 1;
            }
            base_flows = std::to_string(base.flows);
            base_wall = std::to_string(base.wall_s).substr(0, 6);
            base_rss = std::to_string(base.peak_rss_kib / 1024);
            ratio = std::to_string(base.wall_s / folded.wall_s).substr(0, 5);
        }
        std::printf("| %u | %llu | %llu | %.2f | %ld | %s | %s | %s | %s | %.2f us |\n", n,
                    static_cast<unsigned long long>(folded.flows), static_cast<unsigned long long>(folded.events),
                    folded.wall_s, folded.peak_rss_kib / 1024, base_flows.c_str(), base_wall.c_str(), base_rss.c_str(),
                    ratio.c_str(), static_cast<double>(folded.makespan_ps) * 1e-6);
        std::fflush(stdout);
    }
    return 0;
}
