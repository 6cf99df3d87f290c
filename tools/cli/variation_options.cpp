// Iterations, samples, seed, stragglers and jitter on the command line.
#include "tools/cli/variation_options.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "engine/error.h"
#include "engine/yaml_reader.h"
#include "sim/cluster_events.h"
#include "sim/scenario/scenario.h"

namespace clustersim::cli {

std::vector<std::string> VariationCliOptions::overrides() const {
    std::vector<std::string> out;
    if (iterations) out.push_back(fmt::format("system.iterations={}", iterations));
    if (samples) out.push_back(fmt::format("system.samples={}", samples));
    if (seed >= 0) out.push_back(fmt::format("system.seed={}", seed));
    return out;
}

void VariationCliOptions::apply(sim::Scenario& scenario) const {
    // Each option as a system block of its own, decoded (and checked) as a scenario's would be; errors name the
    // option.
    const auto read = [&](const std::string& yaml, const std::string& option) {
        const std::size_t before = scenario.options.variability.stragglers.size();
        try {
            sim::read_system(engine::YamlValue::load_string(yaml, option), scenario.options, scenario.repetition);
        } catch (const engine::InputError& e) {
            throw engine::InputError(engine::SourceLocation{option}, e.message());
        }
        auto& added = scenario.options.variability.stragglers;
        for (std::size_t k = before; k < added.size(); ++k) added[k].where = engine::SourceLocation{option};
    };
    if (iterations) read(fmt::format("iterations: {}", iterations), "--iterations");
    if (samples) read(fmt::format("samples: {}", samples), "--samples");
    if (seed >= 0) read(fmt::format("seed: {}", seed), "--seed");
    if (jitter >= 0) read(fmt::format("jitter: {{distribution: lognormal, sigma: {}}}", jitter), "--jitter");
    for (const std::string& s : stragglers) {
        const auto colon = s.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == s.size())
            throw engine::InputError(engine::SourceLocation{"--straggler"},
                                     fmt::format("expected RANKS:FACTOR (e.g. 3:1.5 or 0,4:2), got \"{}\"", s));
        read(fmt::format("stragglers: [{{ranks: [{}], slowdown: {}}}]", s.substr(0, colon), s.substr(colon + 1)),
             "--straggler " + s);
    }
    if (!events.empty()) {
        try {
            scenario.options.cluster_events =
                sim::read_cluster_events(engine::YamlValue::load_string(events, "--events"), scenario.cluster);
        } catch (const engine::InputError& e) {
            throw engine::InputError(engine::SourceLocation{"--events"}, e.message());
        }
    }
    sim::apply_iterations(scenario);
}

void add_variation_options(CLI::App& cmd, VariationCliOptions& o, bool variability) {
    cmd.add_option("--iterations", o.iterations,
                   "Run N iterations back to back (system.iterations): each rank starts the next when its own "
                   "streams finished the last, so skew carries over; the summary lists each iteration's time")
        ->check(CLI::Range(1U, sim::RunRepetition::max_iterations));
    cmd.add_option("--samples", o.samples,
                   "Run K seeded samples (seeds SEED .. SEED+K-1, system.samples) and report the distribution of "
                   "iteration time (p50, p90, p99, max) and how often each rank was on the critical path")
        ->check(CLI::Range(1U, sim::RunRepetition::max_samples));
    cmd.add_option("--seed", o.seed, "Seed of the jitter (system.seed, default 1): the same seed, the same run")
        ->check(CLI::NonNegativeNumber);
    if (!variability) return;
    cmd.add_option("--straggler", o.stragglers,
                   "Ranks whose kernels take FACTOR times as long, RANKS:FACTOR (e.g. 3:1.5 or 0,4:2; repeatable)")
        ->type_name("RANKS:FACTOR");
    cmd.add_option("--events", o.events,
                   "Changes to the cluster during the run, as system.events (formats.md), e.g. \"[{at: 5 ms, link: "
                   "n0.nic3 <-> leaf0.rail3, down: true}]\": links or devices degraded (bandwidth: 0.5) or down, "
                   "back at until; GPUs failing")
        ->type_name("YAML");
    cmd.add_option("--jitter", o.jitter,
                   "Per-kernel duration noise: log-normal with mean 1 and this sigma (e.g. 0.05), drawn from --seed")
        ->check(CLI::Range(0.0, 3.0));
}

}  // namespace clustersim::cli
