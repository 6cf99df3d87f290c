// Seeded samples and their statistics.
#include "sim/scenario/samples.h"

#include <algorithm>

#include "engine/ordered_parallel.h"
#include "sim/analysis.h"
#include "traces/iterations.h"

namespace clustersim::sim {

using engine::Time;

SampleFacts sample_facts(const traces::OpGraph& graph, const traces::Timeline& timeline,
                         const traces::CriticalPath& path) {
    SampleFacts f;
    const std::vector<Time> ends = traces::iteration_ends(graph, timeline);
    for (std::size_t k = 0; k < ends.size(); ++k) f.iteration_times.push_back(ends[k] - (k ? ends[k - 1] : Time{0}));
    std::vector<Time> by_rank(graph.rank_count, Time{0});
    for (const traces::CriticalStep& step : path.steps) {
        by_rank[graph.rank_of(graph.ops[step.op.index()]).index()] += step.end - step.start;
        f.critical_total += step.end - step.start;
    }
    for (std::uint32_t r = 0; r < graph.rank_count; ++r)
        if (by_rank[r] > Time{0}) f.critical_ranks.emplace_back(graph.job_rank(traces::RankId{r}), by_rank[r]);
    std::sort(f.critical_ranks.begin(), f.critical_ranks.end());
    return f;
}

traces::SampleStats sample_stats(const std::vector<SampleFacts>& samples, std::uint64_t first_seed) {
    traces::SampleStats s;
    s.samples = static_cast<std::uint32_t>(samples.size());
    s.first_seed = first_seed;
    std::vector<std::pair<std::uint32_t, std::pair<std::uint32_t, double>>> ranks;  // rank -> (samples, share sum)
    for (const SampleFacts& f : samples) {
        s.iteration_times.insert(s.iteration_times.end(), f.iteration_times.begin(), f.iteration_times.end());
        for (const auto& [rank, time] : f.critical_ranks) {
            auto it = std::lower_bound(ranks.begin(), ranks.end(), rank,
                                       [](const auto& e, std::uint32_t r) { return e.first < r; });
            if (it == ranks.end() || it->first != rank) it = ranks.insert(it, {rank, {0, 0.0}});
            ++it->second.first;
            if (f.critical_total > Time{0})
                it->second.second += static_cast<double>(time.count()) / static_cast<double>(f.critical_total.count());
        }
    }
    std::sort(s.iteration_times.begin(), s.iteration_times.end());
    if (!s.iteration_times.empty()) {
        // Nearest rank: the smallest time with at least p% of the iterations at or below it.
        const auto at = [&](double p) {
            const auto n = static_cast<double>(s.iteration_times.size());
            const auto k = static_cast<std::size_t>(std::max(1.0, std::ceil(p / 100 * n)));
            return s.iteration_times[k - 1];
        };
        s.p50 = at(50);
        s.p90 = at(90);
        s.p99 = at(99);
        s.max = s.iteration_times.back();
        std::int64_t sum = 0;
        for (const Time t : s.iteration_times) sum += t.count();
        s.mean = Time{sum / static_cast<std::int64_t>(s.iteration_times.size())};
    }
    for (const auto& [rank, counts] : ranks)
        s.critical_ranks.push_back({rank, counts.first, counts.second / static_cast<double>(samples.size())});
    std::stable_sort(s.critical_ranks.begin(), s.critical_ranks.end(), [](const auto& a, const auto& b) {
        return a.samples != b.samples ? a.samples > b.samples : a.share > b.share;
    });
    if (s.critical_ranks.size() > 16) s.critical_ranks.resize(16);
    return s;
}

traces::SampleStats run_samples(const traces::OpGraph& graph, const topo::Cluster& cluster,
                                const ReplayOptions& options, std::uint32_t count, SampleFacts first,
                                unsigned threads) {
    std::vector<SampleFacts> facts(count);
    facts[0] = std::move(first);
    // Samples 1.. on the threads, each stored in its place; the lowest failing sample's error is the one reported,
    // as on one thread, whatever the threads' timing.
    engine::run_ordered<SampleFacts>(
        count - 1, threads,
        [&](std::size_t i) {
            ReplayOptions o = options;
            o.variability.seed = options.variability.seed + static_cast<std::uint32_t>(i + 1);
            o.progress = {};
            const ReplayResult r = replay(graph, cluster, o);
            return sample_facts(graph, r.timeline, critical_path(graph, r.timeline));
        },
        [&](std::size_t i, auto&& f) { facts[i + 1] = std::move(f); });
    return sample_stats(facts, options.variability.seed);
}

}  // namespace clustersim::sim
