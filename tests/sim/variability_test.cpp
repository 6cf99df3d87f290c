// Stragglers, jitter, iterations and seeded samples against closed forms: a slow rank delays a ring all-reduce by
// its lateness, a window of slowness stretches a kernel by the lost work, iterations carry skew over, and jitter
// is a pure function of (seed, kernel).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "engine/yaml_reader.h"
#include "sim/analysis.h"
#include "sim/scenario/samples.h"
#include "sim/scenario/system_options.h"
#include "tests/sim/replay_fixture.h"
#include "tests/test_support.h"
#include "traces/formats/trace_import.h"
#include "traces/iterations.h"

using namespace clustersim;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using engine::Time;
using testing::GraphBuilder;

namespace {
// Each of 4 ranks computes `work`, then all-reduces 4 MB on a ring of 50 GB/s, 1 us links (126 us alone).
traces::OpGraph compute_then_all_reduce(Time work) {
    GraphBuilder b(4);
    for (std::uint32_t r = 0; r < 4; ++r) {
        const auto c = b.compute(r, "compute", work);
        b.collective(r, "comm", "world", {0, 1, 2, 3}, 4'000'000, traces::CollectiveKind::all_reduce, {c});
    }
    return b.g;
}

sim::Straggler straggler(std::vector<std::uint32_t> ranks, double slowdown) {
    sim::Straggler s;
    s.ranks = std::move(ranks);
    s.slowdown = slowdown;
    return s;
}

sim::ReplayResult run(const traces::OpGraph& g, const sim::ReplayOptions& o) {
    return sim::replay(g, testing::ring_cluster(4, "50 GB/s", "1 us"), o);
}
}  // namespace

TEST_CASE("a rank slowed by x delays every member of a ring all-reduce by its lateness", "[sim][variability]") {
    const auto g = compute_then_all_reduce(100us);
    auto o = testing::exact_options();
    REQUIRE(run(g, o).timeline.makespan == 226us);
    o.variability.stragglers.push_back(straggler({2}, 1.5));
    const auto r = run(g, o);
    // Rank 2 computes 150 us: the all-reduce ends 50 us late and takes its 126 us after the last arrival. (Rank 0's
    // and rank 3's first sends, which need only ranks present, went before rank 2 arrived: rank 1's receives run one
    // hop's latency ahead.)
    REQUIRE(r.timeline.makespan == 276us);
    // Named by its GPU instead (rank 2 runs on GPU 2): the same run.
    auto by_gpu = testing::exact_options();
    by_gpu.variability.stragglers.push_back(straggler({}, 1.5));
    by_gpu.variability.stragglers[0].gpus = {2};
    REQUIRE(run(g, by_gpu).timeline == r.timeline);
    std::vector<Time> ends;
    for (std::uint32_t rank = 0; rank < 4; ++rank) ends.push_back(r.timeline.ends[2 * rank + 1]);
    REQUIRE(ends == std::vector<Time>{276us, 275us, 276us, 276us});
    // The others wait for it inside the call: rank 0 50 us, less its first send (1 us + 1 MB at 50 GB/s = 21 us).
    const auto summary = sim::summarize_run(g, r.timeline);
    REQUIRE(summary.ranks[0].peer_wait == 29us);
    REQUIRE(summary.ranks[2].peer_wait == 0us);
}

TEST_CASE("a window of slowness stretches a running kernel by the work it lost", "[sim][variability]") {
    GraphBuilder b(1);
    b.compute(0, "compute", 100us);
    b.compute(0, "compute", 100us);
    auto o = testing::exact_options();
    auto s = straggler({0}, 2.0);
    s.from = Time{30'000'000};    // 30 us
    s.until = Time{130'000'000};  // 130 us
    o.variability.stragglers.push_back(s);
    const auto r = sim::replay(b.g, testing::ring_cluster(2, "50 GB/s", "1 us"), o);
    // First kernel: 30 us at full speed, then half speed: 70 us of work left takes 140 us, but the window closes at
    // 130 us (50 us of work done in it), and the last 20 us run at full speed: ends at 150 us. The second starts at
    // 150 us, after the window: 100 us.
    REQUIRE(r.timeline.ends[0] == 150us);
    REQUIRE(r.timeline.ends[1] == 250us);
}

TEST_CASE("an iteration-bound straggler slows only its iterations, and skew carries over", "[sim][variability]") {
    const auto one = compute_then_all_reduce(100us);
    const auto g = traces::repeat_iterations(one, 3, "test");
    REQUIRE(g.iteration_count() == 3);
    REQUIRE(g.ops.size() == 3 * one.ops.size());
    REQUIRE(g.iteration_of(traces::OpId{0}) == 1);
    REQUIRE(g.iteration_of(traces::OpId{static_cast<std::uint32_t>(2 * one.ops.size())}) == 3);
    auto o = testing::exact_options();
    const auto plain = run(g, o);
    REQUIRE(traces::iteration_ends(g, plain.timeline) == std::vector<Time>{226us, 452us, 678us});
    auto s = straggler({1}, 2.0);
    s.first_iteration = s.last_iteration = 2;
    o.variability.stragglers.push_back(s);
    const auto r = run(g, o);
    // Iteration 2 is 100 us longer (rank 1 computes 200 us); the others keep their time.
    REQUIRE(traces::iteration_ends(g, r.timeline) == std::vector<Time>{226us, 552us, 778us});
}

TEST_CASE("iterations run back to back per rank: a rank starts the next when its own streams are done",
          "[sim][variability]") {
    // Rank 0: a 10 us kernel on stream a and a 50 us one on stream b; rank 1: 30 us on a. Three iterations:
    // rank 0's iterations end at 50, 100, 150 us (stream a waits for b), rank 1's at 30, 60, 90 us.
    GraphBuilder b(2);
    b.compute(0, "a", 10us);
    b.compute(0, "b", 50us);
    b.compute(1, "a", 30us);
    const auto g = traces::repeat_iterations(b.g, 3, "test");
    const auto r = sim::replay(g, testing::ring_cluster(2, "50 GB/s", "1 us"), testing::exact_options());
    REQUIRE(r.timeline.start(traces::OpId::from_index(3)) == 50us);  // rank 0, iteration 2, stream a
    REQUIRE(r.timeline.start(traces::OpId::from_index(5)) == 30us);  // rank 1, iteration 2
    REQUIRE(r.timeline.ends[8] == 90us);
    REQUIRE(r.timeline.makespan == 150us);
    REQUIRE_THROWS_WITH(traces::repeat_iterations(g, 2, "test"), Contains("already holds several iterations"));
}

TEST_CASE("jitter is a pure function of seed and kernel, with the stated mean and spread", "[sim][variability]") {
    sim::Jitter j;
    j.distribution = sim::Jitter::Distribution::lognormal;
    j.sigma = 0.1;
    double sum = 0, sum2 = 0;
    const int n = 20'000;
    for (int k = 0; k < n; ++k) {
        const double f = sim::jitter_factor(j, 7, k);
        REQUIRE(f == sim::jitter_factor(j, 7, k));
        sum += f;
        sum2 += std::log(f) * std::log(f);
    }
    // Mean 1 and log-space standard deviation sigma, within sampling error (about 0.001 and 0.0005 here).
    REQUIRE(sum / n == Approx(1.0).margin(0.004));
    REQUIRE(std::sqrt(sum2 / n) == Approx(0.1).margin(0.003));
    REQUIRE(sim::jitter_factor(j, 7, 3) != sim::jitter_factor(j, 8, 3));
    j.distribution = sim::Jitter::Distribution::normal;
    j.sigma = 0.05;
    for (int k = 0; k < 1000; ++k) REQUIRE(sim::jitter_factor(j, 1, k) >= 0);
    j.distribution = sim::Jitter::Distribution::empirical;
    j.factors = {0.9, 1.1};
    for (int k = 0; k < 100; ++k) {
        const double f = sim::jitter_factor(j, 1, k);
        REQUIRE((f == 0.9 || f == 1.1));
    }
}

TEST_CASE("seeded samples: one distribution whatever the thread count, each sample reproducible by its seed",
          "[sim][variability]") {
    const auto g = traces::repeat_iterations(compute_then_all_reduce(100us), 2, "test");
    auto o = testing::exact_options();
    o.variability.jitter.distribution = sim::Jitter::Distribution::lognormal;
    o.variability.jitter.sigma = 0.2;
    o.variability.seed = 11;
    const auto cluster = testing::ring_cluster(4, "50 GB/s", "1 us");
    const auto first = sim::replay(g, cluster, o);
    const auto facts = sim::sample_facts(g, first.timeline, sim::critical_path(g, first.timeline));
    const auto one = sim::run_samples(g, cluster, o, 6, facts, 1);
    const auto two = sim::run_samples(g, cluster, o, 6, facts, 3);
    REQUIRE(one == two);
    REQUIRE(one.samples == 6);
    REQUIRE(one.iteration_times.size() == 12);
    REQUIRE(one.p50 <= one.p90);
    REQUIRE(one.p90 <= one.max);
    REQUIRE(one.max == one.iteration_times.back());
    // Sample 3 is the run with seed 14.
    auto o3 = o;
    o3.variability.seed = 14;
    const auto third = sim::replay(g, cluster, o3);
    const auto ends = traces::iteration_ends(g, third.timeline);
    REQUIRE(std::find(one.iteration_times.begin(), one.iteration_times.end(), ends[0]) != one.iteration_times.end());
    // The critical path always runs through some rank's kernel and the all-reduce: every sample counts a rank.
    REQUIRE(!one.critical_ranks.empty());
    REQUIRE(one.critical_ranks.front().samples <= 6);
}

TEST_CASE("bad variability settings are located errors", "[sim][variability]") {
    auto read = [](const std::string& text) {
        const auto doc = engine::YamlValue::load_string(text, "s.yaml");
        sim::ReplayOptions o;
        sim::RunRepetition rep;
        sim::read_system(doc, o, rep);
        return std::pair{o, rep};
    };
    const auto [o, rep] = read(
        "stragglers: [{ranks: [3, 1, 3], slowdown: 1.5, from: 2 ms, until: 5 ms}]\njitter: {distribution: normal, "
        "sigma: 0.05}\nseed: 9\niterations: 4\nsamples: 8\n");
    REQUIRE(o.variability.stragglers.at(0).ranks == std::vector<std::uint32_t>{1, 3});
    REQUIRE(o.variability.stragglers[0].until == 5ms);
    REQUIRE(o.variability.seed == 9);
    REQUIRE(rep.iterations == 4);
    REQUIRE(rep.samples == 8);
    REQUIRE_THROWS_WITH(read("stragglers: [{ranks: 1, slowdown: 0}]"), Contains("s.yaml:1") && Contains("above 0"));
    REQUIRE_THROWS_WITH(read("stragglers: [{ranks: 1, gpus: 1, slowdown: 2}]"), Contains("one of them"));
    REQUIRE_THROWS_WITH(read("stragglers: [{ranks: 1, slowdown: 2, from: 2 ms, iterations: 2}]"), Contains("not both"));
    REQUIRE_THROWS_WITH(read("stragglers: [{ranks: 1, slowdown: 2, from: 5 ms, until: 2 ms}]"),
                        Contains("after 'from'"));
    REQUIRE_THROWS_WITH(read("jitter: {distribution: gamma, sigma: 1}"), Contains("lognormal"));
    REQUIRE_THROWS_WITH(read("jitter: {distribution: normal, sigma: 2}"), Contains("from 0 to 1"));
    REQUIRE_THROWS_WITH(read("jitter: {distribution: empirical}"), Contains("needs factors"));
    REQUIRE_THROWS_WITH(read("iterations: 0"), Contains("from 1 to"));
    // A straggler naming a rank the job lacks fails at the replay, naming its entry.
    const auto g = compute_then_all_reduce(100us);
    auto bad = testing::exact_options();
    bad.variability.stragglers.push_back(straggler({9}, 2.0));
    bad.variability.stragglers[0].where = engine::SourceLocation{"s.yaml", 4, 5, "system.stragglers[0]"};
    REQUIRE_THROWS_WITH(run(g, bad), Contains("s.yaml:4") && Contains("rank 9 does not exist"));
}

TEST_CASE("empirical jitter from a real 8-rank trace: the same kernel across ranks, over its median",
          "[sim][variability][data]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: empirical jitter test skipped");
        return;
    }
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(testing::shared_data("kineto/dlrm_v100_8ranks")))
        files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() == 8);
    const auto g = traces::import_traces(files, {});
    std::vector<double> f = sim::empirical_jitter_factors(g);
    // Nearly every compute kernel of the step has its counterparts on the other ranks (1,908 of 1,932: the ranks'
    // embedding shards differ a little in their kernels), so nearly every one gives a factor.
    std::size_t kernels = 0;
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        kernels += g.ops[i].kind == traces::OpKind::compute && g.duration(traces::OpId::from_index(i)) > Time{0};
    REQUIRE(kernels == 1932);
    REQUIRE(f.size() == 1908);
    std::sort(f.begin(), f.end());
    const double p05 = f[f.size() / 20], p50 = f[f.size() / 2], p95 = f[f.size() * 19 / 20];
    INFO("factors: p5 " << p05 << ", p50 " << p50 << ", p95 " << p95);
    REQUIRE(p50 == Approx(1.0).margin(0.01));
    REQUIRE(p05 < 1.0);
    REQUIRE(p95 > 1.0);
}
