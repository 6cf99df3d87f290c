// The `system:` block of a scenario: collective algorithms and protocols, network and compute options, rank
// placement, and the run's variability (stragglers, jitter, seed) and repetition (iterations, samples). Every key
// checked and located.
#pragma once

#include <cstdint>

#include "engine/yaml_reader.h"
#include "sim/replay/replay.h"

namespace clustersim::sim {

/// How often a scenario runs: iterations back to back in one replay, and seeded samples of that replay.
struct RunRepetition {
    std::uint32_t iterations = 1;
    std::uint32_t samples = 1;
    static constexpr std::uint32_t max_iterations = 100'000;
    static constexpr std::uint32_t max_samples = 10'000;
};

/// Decodes `system` into `options` and `repetition` (rank_to_gpu and memory_check are checked by the caller,
/// which knows the graph).
void read_system(const engine::YamlValue& system, ReplayOptions& options, RunRepetition& repetition);

/// Factors for empirical jitter from a traced graph: each kernel's duration over the median of its group, a group
/// being the same kernel (name, and its occurrence on its rank) across ranks when the trace has three or more ranks,
/// otherwise every kernel of that name. Groups of fewer than three are left out.
std::vector<double> empirical_jitter_factors(const traces::OpGraph& graph);

}  // namespace clustersim::sim
