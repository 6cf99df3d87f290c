// Engine benchmark: the hold model at N = 1e3, 1e5, 1e6 pending events, Simulator vs a bare
// std::priority_queue in the same run. Prints ns per event for both and their ratio (target <= 1.5).
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "tools/bench/hold_model.h"

namespace {

using clustersim::bench::BareHold;
using clustersim::bench::SimulatorHold;
constexpr std::uint64_t batch = 10'000;

void simulator_hold(benchmark::State& state) {
    SimulatorHold hold(static_cast<std::size_t>(state.range(0)), 42);
    hold.run(static_cast<std::uint64_t>(state.range(0)));  // warm up: reach the steady-state time distribution
    for (auto _ : state) benchmark::DoNotOptimize(hold.run(batch));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
}

void bare_priority_queue_hold(benchmark::State& state) {
    BareHold hold(static_cast<std::size_t>(state.range(0)), 42);
    hold.run(static_cast<std::uint64_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(hold.run(batch));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
}

BENCHMARK(simulator_hold)->Arg(1'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMicrosecond);
BENCHMARK(bare_priority_queue_hold)->Arg(1'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMicrosecond);

/// Collects per-event times of both benchmarks and prints the ratio table after the run.
class RatioReporter : public benchmark::ConsoleReporter {
public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& r : runs) {
            const double ns_per_event = r.GetAdjustedRealTime() * 1e3 / static_cast<double>(batch);  // unit is us
            const std::string name = r.benchmark_name();
            const auto slash = name.find('/');
            const std::string n = name.substr(slash + 1);
            if (name.rfind("simulator_hold", 0) == 0)
                engine_[n] = ns_per_event;
            else
                bare_[n] = ns_per_event;
        }
    }
    void Finalize() override {
        ConsoleReporter::Finalize();
        std::printf("\n| pending N | Simulator ns/event | bare priority_queue ns/event | ratio |\n|---|---|---|---|\n");
        for (const auto& [n, ns] : engine_) {
            const auto it = bare_.find(n);
            if (it == bare_.end()) continue;
            std::printf("| %s | %.1f | %.1f | %.2f |\n", n.c_str(), ns, it->second, ns / it->second);
        }
    }

private:
    std::map<std::string, double> engine_, bare_;
};

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
