// Ring benchmark: one 1 GiB ring all-reduce over every GPU of a rail-optimized DGX-H100 cluster, contention-aware
// (max-min, collectives as flows, NCCL's protocols and 8 channels: one ring per channel), run from ring schedules
// (the default: sim/collectives/ring_schedule.h) and, as the baseline in the same run, from the listed plan (every
// transfer and dependency built before the call: ReplayOptions::ring_schedules off). Both must give the same
// simulated time; the bench stops with an error otherwise. Each run happens in a child process of its own (fork),
// so that its wall time and peak RSS are its own: neither the other run's memory nor its heap's state after it.
// Usage: bench_ring [largest node count, default 128; doubling from 16] [channels, default 8]
//        [largest node count with the listed baseline, default 128]
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
    const std::uint32_t max_listed = argc > 3 ? static_cast<std::uint32_t>(std::stoul(argv[3])) : 128;
    std::printf(
        "ring benchmark: 1 GiB ring all-reduce over every GPU, dgx-h100 rail-optimized, %u channels, "
        "contention-aware, NCCL's protocols\n\n",
        channels);
    std::printf(
        "| GPUs | flows | events | schedules: wall s | peak RSS MiB | baseline, listed plan: wall s | peak RSS "
        "MiB | ratio | simulated |\n|---|---|---|---|---|---|---|---|---|\n");
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
        const Run scheduled = timed(graph, cluster, options);
        std::string listed_wall = "-", listed_rss = "-", ratio = "-";
        if (nodes <= max_listed) {
            options.ring_schedules = false;
            const Run listed = timed(graph, cluster, options);
            if (listed.makespan_ps != scheduled.makespan_ps || listed.events != scheduled.events) {
                std::fprintf(stderr, "bench_ring: the listed plan and the schedules disagree at %u GPUs\n", n);
                return 1;
            }
            listed_wall = std::to_string(listed.wall_s).substr(0, 6);
            listed_rss = std::to_string(listed.peak_rss_kib / 1024);
            ratio = std::to_string(listed.wall_s / scheduled.wall_s).substr(0, 5);
        }
        std::printf("| %u | %llu | %llu | %.2f | %ld | %s | %s | %s | %.2f us |\n", n,
                    static_cast<unsigned long long>(scheduled.flows), static_cast<unsigned long long>(scheduled.events),
                    scheduled.wall_s, scheduled.peak_rss_kib / 1024, listed_wall.c_str(), listed_rss.c_str(),
                    ratio.c_str(), static_cast<double>(scheduled.makespan_ps) * 1e-6);
        std::fflush(stdout);
    }
    return 0;
}
