// `clustersim bench engine`: the hold model on the Simulator and on a bare priority queue, timed in one run.
#include <chrono>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "engine/time.h"
#include "tools/bench/hold_model.h"
#include "tools/cli/commands.h"

namespace clustersim::cli {

namespace {

struct BenchOptions {
    std::size_t pending = 100'000;
    std::uint64_t events = 2'000'000;
    std::uint64_t seed = 1;
};

template <class Hold>
double seconds_to_run(Hold& hold, std::uint64_t events) {
    const auto start = std::chrono::steady_clock::now();
    hold.run(events);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void run_engine_bench(const BenchOptions& o) {
    bench::SimulatorHold engine_hold(o.pending, o.seed);
    bench::BareHold bare_hold(o.pending, o.seed);
    engine_hold.run(o.pending);  // warm-up to the steady state
    bare_hold.run(o.pending);
    const double engine_s = seconds_to_run(engine_hold, o.events);
    const double bare_s = seconds_to_run(bare_hold, o.events);
    const auto& sim = engine_hold.simulator();
    std::printf("hold model: %zu pending events, %llu events timed (seed %llu)\n", o.pending,
                static_cast<unsigned long long>(o.events), static_cast<unsigned long long>(o.seed));
    std::printf("  simulated time       %s\n", engine::format_time(sim.now()).c_str());
    std::printf("  events processed     %llu\n", static_cast<unsigned long long>(sim.events_processed()));
    std::printf("  Simulator            %.1f ns/event (%.2f M events/s)\n",
                engine_s * 1e9 / static_cast<double>(o.events), static_cast<double>(o.events) / engine_s / 1e6);
    std::printf("  bare priority_queue  %.1f ns/event\n", bare_s * 1e9 / static_cast<double>(o.events));
    std::printf("  ratio                %.2f (target <= 1.5)\n", engine_s / bare_s);
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
    engine_cmd->add_option("--pending", options->pending, "Events kept pending (queue size)")
        ->capture_default_str()
        ->check(CLI::Range(1, 100'000'000));
    engine_cmd->add_option("--events", options->events, "Events to time")
        ->capture_default_str()
        ->check(CLI::Range(1ULL, 1'000'000'000ULL));
    engine_cmd->add_option("--seed", options->seed, "Seed of the random increments")->capture_default_str();
    engine_cmd->callback([options] { run_engine_bench(*options); });
}

}  // namespace clustersim::cli
