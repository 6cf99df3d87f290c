// `clustersim bench engine`: the hold model on the Simulator and on a bare priority queue, timed in one run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "engine/time.h"
#include "engine/units.h"
#include "tools/bench/hold_model.h"
#include "tools/bench/random_flows.h"
#include "tools/cli/commands.h"
#include "traces/formats/trace_import.h"
#include "traces/text_file.h"

namespace clustersim::cli {

namespace {

struct BenchOptions {
    std::size_t pending = 100'000;
    std::uint64_t events = 2'000'000;
    std::uint64_t seed = 1;
    std::uint32_t durations = 0;  // 0: continuous increments; else one of that many (events at equal times)
};

template <class Hold>
double seconds_to_run(Hold& hold, std::uint64_t events) {
    const auto start = std::chrono::steady_clock::now();
    hold.run(events);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void run_engine_bench(const BenchOptions& o) {
    bench::SimulatorHold engine_hold(o.pending, o.seed, o.durations);
    bench::BareHold bare_hold(o.pending, o.seed, o.durations);
    engine_hold.run(o.pending);  // warm-up to the steady state
    bare_hold.run(o.pending);
    const double engine_s = seconds_to_run(engine_hold, o.events);
    const double bare_s = seconds_to_run(bare_hold, o.events);
    const auto& sim = engine_hold.simulator();
    const std::string increments =
        o.durations == 0 ? "uniform in [1 ps, 2 us]" : fmt::format("one of {} durations up to 2 us", o.durations);
    std::printf("hold model: %zu pending events, %llu events timed (seed %llu), increments %s\n", o.pending,
                static_cast<unsigned long long>(o.events), static_cast<unsigned long long>(o.seed), increments.c_str());
    std::printf("  simulated time       %s\n", engine::format_time(sim.now()).c_str());
    std::printf("  events processed     %llu\n", static_cast<unsigned long long>(sim.events_processed()));
    std::printf("  Simulator            %.1f ns/event (%.2f M events/s)\n",
                engine_s * 1e9 / static_cast<double>(o.events), static_cast<double>(o.events) / engine_s / 1e6);
    std::printf("  bare priority_queue  %.1f ns/event\n", bare_s * 1e9 / static_cast<double>(o.events));
    std::printf("  ratio                %.2f (target <= 1.5)\n", engine_s / bare_s);
}

struct NetworkBenchOptions {
    std::uint64_t flows = 100'000;
    std::uint64_t concurrent = 1'000;
    int nodes = 128;
    std::uint64_t seed = 1;
};

void print_network_row(const char* mode, const bench::RandomFlowsResult& r) {
    std::printf("| %-18s | %9llu | %8.3f | %12.0f | %10llu | %14.2f | %10.1f | %s |\n", mode,
                static_cast<unsigned long long>(r.flows), r.wall_seconds, static_cast<double>(r.flows) / r.wall_seconds,
                static_cast<unsigned long long>(r.rate_updates),
                r.rate_updates ? r.wall_seconds * 1e6 / static_cast<double>(r.rate_updates) : 0.0,
                r.rate_updates ? static_cast<double>(r.flows_reassigned) / static_cast<double>(r.rate_updates) : 0.0,
                engine::format_time(r.simulated).c_str());
}

void run_network_bench(const NetworkBenchOptions& o) {
    bench::RandomFlowsConfig config;
    config.overrides = {fmt::format("nodes={}", o.nodes), "fabric=rail-optimized"};
    config.total_flows = o.flows;
    config.concurrent = o.concurrent;
    config.seed = o.seed;
    std::printf(
        "random flows on dgx-h100 x%d (rail-optimized, %d GPUs): %llu flows, %llu in flight, 1 KiB..1 GiB "
        "log-uniform, seed %llu\n\n",
        o.nodes, o.nodes * 8, static_cast<unsigned long long>(o.flows), static_cast<unsigned long long>(o.concurrent),
        static_cast<unsigned long long>(o.seed));
    std::printf(
        "| sharing            |     flows |   wall s | completions/s | rate updates | us per update | "
        "flows/update | simulated |\n|---|---|---|---|---|---|---|---|\n");
    config.sharing = sim::SharingModel::max_min;
    const auto aware = bench::run_random_flows(config);
    print_network_row("max-min (aware)", aware);
    config.sharing = sim::SharingModel::contention_free;
    const auto free = bench::run_random_flows(config);
    print_network_row("contention-free", free);
    std::printf(
        "\ncontention-aware / contention-free wall time: %.2f; flows whose rate changed per update: %.1f\n",
        aware.wall_seconds / free.wall_seconds,
        aware.rate_updates ? static_cast<double>(aware.flows_rerated) / static_cast<double>(aware.rate_updates) : 0.0);
}

struct ImportBenchOptions {
    std::vector<std::string> files;
    std::string format = "auto";
    int repeat = 3;
};

void run_import_bench(const ImportBenchOptions& o) {
    // Bytes read (after decompression), then the best of `repeat` imports (decompression and parsing included).
    double bytes = 0;
    for (const auto& f : o.files) bytes += static_cast<double>(traces::read_text_file(f).size());
    traces::ImportOptions import;
    import.format = o.format;
    double best = 1e30;
    std::size_t ops = 0;
    for (int k = 0; k < o.repeat; ++k) {
        const auto start = std::chrono::steady_clock::now();
        const auto graph = traces::import_traces(o.files, import);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        ops = graph.ops.size();
    }
    std::printf("import of %zu file(s), %.1f MB uncompressed, format %s: %.3f s (best of %d)\n", o.files.size(),
                bytes / 1e6, o.format.c_str(), best, o.repeat);
    std::printf("  %.1f MB/s of input, %.0f ops/s (%zu ops)\n", bytes / 1e6 / best, static_cast<double>(ops) / best,
                ops);
}

}  // namespace

void add_bench_command(CLI::App& app) {
    auto* bench = app.add_subcommand("bench", "Quick performance checks of the simulator's own machinery");
    bench->require_subcommand(1);
    auto options = std::make_shared<BenchOptions>();
    auto* engine_cmd = bench->add_subcommand(
        "engine",
        "Hold model: N pending events, each pop schedules one more; Simulator vs bare priority_queue.\n"
        "Example: clustersim bench engine --pending 1000000 --events 5000000");
    engine_cmd
        ->add_option("--pending", options->pending,
                     "Events kept pending (queue size, at most 2^24: the engine's limit)")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 24));
    engine_cmd->add_option("--events", options->events, "Events to time")
        ->capture_default_str()
        ->check(CLI::Range(1ULL, 1'000'000'000ULL));
    engine_cmd->add_option("--seed", options->seed, "Seed of the random increments")->capture_default_str();
    engine_cmd
        ->add_option("--durations", options->durations,
                     "Draw each increment from this many durations (multiples of 2 us / N), so that events often "
                     "fall at equal times, as when ranks in step run kernels of a few lengths; 0: uniform in "
                     "[1 ps, 2 us]")
        ->capture_default_str()
        ->check(CLI::Range(0, 1'000'000));
    engine_cmd->callback([options] { run_engine_bench(*options); });

    auto net_options = std::make_shared<NetworkBenchOptions>();
    auto* network_cmd = bench->add_subcommand(
        "network",
        "Random flows on a rail-optimized DGX-H100 cluster, contention-aware vs contention-free.\n"
        "Example: clustersim bench network --nodes 128 --flows 100000 --concurrent 1000");
    network_cmd->add_option("--nodes", net_options->nodes, "DGX-H100 servers (8 GPUs each)")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    network_cmd->add_option("--flows", net_options->flows, "Flows in total")
        ->capture_default_str()
        ->check(CLI::Range(1ULL, 100'000'000ULL));
    network_cmd->add_option("--concurrent", net_options->concurrent, "Flows in flight")
        ->capture_default_str()
        ->check(CLI::Range(1ULL, 10'000'000ULL));
    network_cmd->add_option("--seed", net_options->seed, "Seed of the flow generator")->capture_default_str();
    network_cmd->callback([net_options] { run_network_bench(*net_options); });

    auto import_options = std::make_shared<ImportBenchOptions>();
    auto* import_cmd = bench->add_subcommand(
        "import",
        "Trace import throughput: MB/s of input and ops/s.\n"
        "Example: clustersim bench import ../shared/data/kineto/hta_tracediff_control_a100_ws8_rank3.json.gz");
    import_cmd->add_option("files", import_options->files, "Trace files")->required()->check(CLI::ExistingFile);
    import_cmd->add_option("--format", import_options->format, "Trace format")->capture_default_str();
    import_cmd->add_option("--repeat", import_options->repeat, "Imports timed (the best counts)")
        ->capture_default_str()
        ->check(CLI::Range(1, 100));
    import_cmd->callback([import_options] { run_import_bench(*import_options); });
}

}  // namespace clustersim::cli
