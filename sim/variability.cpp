// Jitter draws: counter-based, so kernel k's factor depends only on (seed, k).
#include "sim/variability.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "engine/hash.h"

namespace clustersim::sim {

double standard_normal(std::uint64_t a, std::uint64_t b) {
    // u1 in (0, 1], u2 in [0, 1): the top 53 bits of each word.
    const double u1 = (static_cast<double>(a >> 11) + 1.0) * 0x1p-53;
    const double u2 = static_cast<double>(b >> 11) * 0x1p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double jitter_factor(const Jitter& jitter, std::uint64_t seed, std::uint64_t kernel) {
    const std::uint64_t base = engine::splitmix64(seed);
    const std::uint64_t a = engine::hash_combine(base, 2 * kernel);
    switch (jitter.distribution) {
        case Jitter::Distribution::none:
            return 1;
        case Jitter::Distribution::empirical:
            return jitter.factors.empty() ? 1 : jitter.factors[a % jitter.factors.size()];
        case Jitter::Distribution::normal:
        case Jitter::Distribution::lognormal:
            break;
    }
    const double z = standard_normal(a, engine::hash_combine(base, 2 * kernel + 1));
    if (jitter.distribution == Jitter::Distribution::normal) return std::max(0.0, 1.0 + jitter.sigma * z);
    return std::exp(jitter.sigma * z - jitter.sigma * jitter.sigma / 2);
}

const char* jitter_distribution_name(Jitter::Distribution distribution) {
    switch (distribution) {
        case Jitter::Distribution::none:
            return "none";
        case Jitter::Distribution::normal:
            return "normal";
        case Jitter::Distribution::lognormal:
            return "lognormal";
        case Jitter::Distribution::empirical:
            return "empirical";
    }
    return "?";
}

}  // namespace clustersim::sim
