// Seeded samples of one run: the same scenario replayed with seeds first, first + 1, ..., each drawing its own
// jitter, and the distribution of iteration time over them with the ranks the critical path ran through. Samples
// run on threads; each is a pure function of its seed, so the result does not depend on the thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/replay/replay.h"
#include "traces/run_summary.h"

namespace clustersim::sim {

/// What one sample contributes: its iteration times and each rank's time on its critical path.
struct SampleFacts {
    std::vector<engine::Time> iteration_times;
    std::vector<std::pair<std::uint32_t, engine::Time>> critical_ranks;  // (job rank, time), by rank
    engine::Time critical_total{};
};

SampleFacts sample_facts(const traces::OpGraph& graph, const traces::Timeline& timeline,
                         const traces::CriticalPath& path);

/// The distribution over samples (given in seed order) whose first ran with `first_seed`.
traces::SampleStats sample_stats(const std::vector<SampleFacts>& samples, std::uint64_t first_seed);

/// Replays samples 1 .. count-1 (seeds options.variability.seed + k) on up to `threads` threads, and returns the
/// statistics over them and `first` (sample 0, already run).
traces::SampleStats run_samples(const traces::OpGraph& graph, const topo::Cluster& cluster,
                                const ReplayOptions& options, std::uint32_t count, SampleFacts first, unsigned threads);

}  // namespace clustersim::sim
