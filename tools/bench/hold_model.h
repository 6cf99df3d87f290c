// The classic "hold" model of event-set benchmarking: N events pending; each popped event schedules one new
// event at a random future time, so the queue size stays N. Run on the Simulator and, as the baseline, on a bare
// std::priority_queue of (time, seq) doing the same pops and pushes.
#pragma once

#include <cstdint>
#include <queue>
#include <random>
#include <vector>

#include "engine/simulator.h"

namespace clustersim::bench {

/// Deterministic increments: uniform integer picoseconds in [1, 2 * mean], or, with `distinct` > 0, one of that
/// many durations (multiples of 2 * mean / distinct), so that events often fall at equal times, as when ranks in
/// step run kernels of a few lengths.
class HoldIncrements {
public:
    HoldIncrements(std::uint64_t seed, std::int64_t mean_ps, std::uint32_t distinct = 0)
        : rng_(seed), span_(2 * mean_ps), distinct_(distinct) {}
    engine::Time next() {
        if (distinct_ > 0) return engine::Time{static_cast<std::int64_t>(1 + rng_() % distinct_) * (span_ / distinct_)};
        return engine::Time{1 + static_cast<std::int64_t>(rng_() % static_cast<std::uint64_t>(span_))};
    }

private:
    std::mt19937_64 rng_;
    std::int64_t span_;
    std::uint32_t distinct_;
};

/// The hold model on the engine's Simulator.
class SimulatorHold {
public:
    /// `distinct`: see HoldIncrements (0: continuous increments).
    SimulatorHold(std::size_t pending, std::uint64_t seed, std::uint32_t distinct = 0);
    /// Runs `events` more events; returns the number run.
    std::uint64_t run(std::uint64_t events);
    [[nodiscard]] const engine::Simulator& simulator() const { return sim_; }

private:
    engine::Simulator sim_;
    HoldIncrements increments_;
};

/// The same on a bare std::priority_queue<(time, seq)>: the lower bound the engine is measured against.
class BareHold {
public:
    BareHold(std::size_t pending, std::uint64_t seed, std::uint32_t distinct = 0);
    std::uint64_t run(std::uint64_t events);
    [[nodiscard]] std::int64_t now_ps() const { return now_; }

private:
    using Entry = std::pair<std::int64_t, std::uint64_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue_;
    HoldIncrements increments_;
    std::uint64_t seq_ = 0;
    std::int64_t now_ = 0;
};

}  // namespace clustersim::bench
