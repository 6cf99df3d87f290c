// Options shared by `run` and `replay`: several iterations, seeded samples, the seed; and for `replay` (which has
// no scenario file) stragglers and jitter, decoded as a scenario's system block would be.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace clustersim::sim {
struct Scenario;
}

namespace clustersim::cli {

struct VariationCliOptions {
    std::uint32_t iterations = 0;  // 0: the scenario's (1 without one)
    std::uint32_t samples = 0;
    std::int64_t seed = -1;
    std::vector<std::string> stragglers;  // replay: "RANKS:FACTOR", RANKS "3" or "0,4"
    double jitter = -1;                   // replay: lognormal sigma
    std::string events;                   // replay: system.events as YAML

    /// `--set` assignments for a scenario file (run).
    [[nodiscard]] std::vector<std::string> overrides() const;
    /// Applies every option to a scenario built in code (replay; its cluster set), iterations included.
    void apply(sim::Scenario& scenario) const;
};

/// --iterations, --samples, --seed; with `variability`, also --straggler and --jitter.
void add_variation_options(CLI::App& cmd, VariationCliOptions& options, bool variability);

}  // namespace clustersim::cli
