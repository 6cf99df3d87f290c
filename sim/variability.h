// Variability of compute: stragglers (ranks whose kernels run slower, for a time window or for some iterations)
// and per-kernel duration noise (jitter), seeded and reproducible. Kernel k of a run gets its noise from a
// counter-based generator of (seed, k): the same seed gives the same durations whatever the event order, the
// machine or the thread count. Assumptions: docs/models.md, "Stragglers and jitter".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/time.h"

namespace clustersim::sim {

/// Ranks (job ranks, or the ranks on the GPUs named) whose compute kernels take `slowdown` times as long: between
/// `from` and `until` (simulated time; a kernel running across a bound changes speed there), and within iterations
/// `first_iteration` .. `last_iteration` (1-based, inclusive; by the iteration the kernel belongs to).
struct Straggler {
    std::vector<std::uint32_t> ranks;
    std::vector<std::uint32_t> gpus;  // or by GPU (index into Cluster::gpus()): the ranks placed on them
    double slowdown = 1;
    engine::Time from{0};
    engine::Time until = engine::max_time;
    std::uint32_t first_iteration = 1;
    std::uint32_t last_iteration = UINT32_MAX;
    engine::SourceLocation where;  // the scenario entry it came from, for messages

    [[nodiscard]] bool timed() const { return from > engine::Time{0} || until != engine::max_time; }
    [[nodiscard]] bool in_iteration(std::uint32_t iteration) const {
        return iteration >= first_iteration && iteration <= last_iteration;
    }
};

/// Multiplicative noise on every compute kernel's duration (host delays keep theirs).
struct Jitter {
    enum class Distribution : std::uint8_t { none, normal, lognormal, empirical };
    Distribution distribution = Distribution::none;
    /// normal: factor 1 + sigma z, cut at 0; lognormal: exp(sigma z - sigma^2 / 2), mean 1.
    double sigma = 0;
    /// empirical: factors drawn uniformly from these (for example a trace's durations over their kernel's median).
    std::vector<double> factors;

    [[nodiscard]] bool active() const {
        return distribution == Distribution::empirical ? !factors.empty()
                                                       : distribution != Distribution::none && sigma > 0;
    }
};

struct Variability {
    std::vector<Straggler> stragglers;
    Jitter jitter;
    std::uint64_t seed = 1;

    [[nodiscard]] bool active() const { return !stragglers.empty() || jitter.active(); }
};

/// The jitter factor of kernel number `kernel` (an op index) under `seed`: a pure function, so reproducible.
double jitter_factor(const Jitter& jitter, std::uint64_t seed, std::uint64_t kernel);

/// A standard normal variate from two 64-bit words (Box-Muller on their top 53 bits).
double standard_normal(std::uint64_t a, std::uint64_t b);

const char* jitter_distribution_name(Jitter::Distribution distribution);

}  // namespace clustersim::sim
