// Engine benchmark: the hold model at N = 1e3, 1e5, 1e6 pending events, with continuous increments and with
// four durations (events at equal times), Simulator vs a bare std::priority_queue in the same run. Prints ns per
// event for both and their ratio (target <= 1.5).
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "tools/bench/hold_model.h"

namespace {

using clustersim::bench::BareHold;
using clustersim::bench::SimulatorHold;
constexpr std::uint64_t batch = 10'000;

/// The hold model on the Simulator; state.range(1) > 0 draws increments from that many durations (events at
/// equal times, ordered by their sequence numbers: ranks in step).
void simulator_hold(benchmark::State& state) {
    SimulatorHold hold(static_cast<std::size_t>(state.range(0)), 42, static_cast<std::uint32_t>(state.range(1)));
    hold.run(static_cast<std::uint64_t>(state.range(0)));  // warm up: reach the steady-state time distribution
    for (auto _ : state) benchmark::DoNotOptimize(hold.run(batch));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
}

void bare_priority_queue_hold(benchmark::State& state) {
    BareHold hold(static_cast<std::size_t>(state.range(0)), 42, static_cast<std::uint32_t>(state.range(1)));
    hold.run(static_cast<std::uint64_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(hold.run(batch));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
}

/// Continuous increments (ties all but never), then four durations (ties common), at each queue size.
void hold_args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"pending", "durations"});
    for (const std::int64_t durations : {0, 4})
        for (const std::int64_t pending : {1'000, 100'000, 1'000'000}) b->Args({pending, durations});
    b->Unit(benchmark::kMicrosecond);
}
BENCHMARK(simulator_hold)->Apply(hold_args);
BENCHMARK(bare_priority_queue_hold)->Apply(hold_args);

/// Collects per-event times of both benchmarks and prints the ratio table after the run.
class RatioReporter : public benchmark::ConsoleReporter {
public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& r : runs) {
            const double ns_per_event = r.GetAdjustedRealTime() * 1e3 / static_cast<double>(batch);  // unit is us
            // Names read "simulator_hold/pending:1000/durations:4"; kept as (durations, pending), the table's order.
            const std::string name = r.benchmark_name();
            const auto value = [&](const std::string& arg) {
                return std::stoull(name.substr(name.find(arg + ":") + arg.size() + 1));  // (up to the next '/')
            };
            const std::pair<std::uint64_t, std::uint64_t> args{value("durations"), value("pending")};
            if (name.rfind("simulator_hold", 0) == 0)
                engine_[args] = ns_per_event;
            else
                bare_[args] = ns_per_event;
        }
    }
    void Finalize() override {
        ConsoleReporter::Finalize();
        std::printf(
            "\n| pending N | increments | Simulator ns/event | bare priority_queue ns/event | ratio |\n"
            "|---|---|---|---|---|\n");
        for (const auto& [args, ns] : engine_) {
            const auto it = bare_.find(args);
            if (it == bare_.end()) continue;
            const auto [durations, pending] = args;
            const std::string increments =
                durations == 0 ? "continuous" : fmt::format("one of {} durations (ties)", durations);
            std::printf("| %llu | %s | %.1f | %.1f | %.2f |\n", static_cast<unsigned long long>(pending),
                        increments.c_str(), ns, it->second, ns / it->second);
        }
    }

private:
    std::map<std::pair<std::uint64_t, std::uint64_t>, double> engine_, bare_;  // by (durations, pending)
};

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
