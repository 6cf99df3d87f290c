// Several jobs on one cluster: two identical jobs on disjoint GPUs sharing one bottleneck link each see half its
// bandwidth; a job's start time delays it and only it; placement policies pick the GPUs they say.
#include <catch2/catch.hpp>

#include "engine/yaml_reader.h"
#include "sim/scenario/jobs.h"
#include "tests/sim/replay_fixture.h"
#include "topologies/topology_loader.h"

using namespace clustersim;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using engine::Time;
using testing::GraphBuilder;
using traces::OpKind;

namespace {
// GPUs 0 and 1 on switch s0, GPUs 2 and 3 on s1; one 10 GB/s cable between the switches, 100 GB/s to the GPUs.
topo::Cluster two_switches() {
    return topo::load_topology(engine::YamlValue::load_string(R"(
devices:
  - {name: g0, kind: gpu, gpu: H100, node: 0}
  - {name: g1, kind: gpu, gpu: H100, node: 0}
  - {name: g2, kind: gpu, gpu: H100, node: 1}
  - {name: g3, kind: gpu, gpu: H100, node: 1}
  - {name: s0, kind: network_switch}
  - {name: s1, kind: network_switch}
links:
  - {between: [g0, s0], bandwidth: 100 GB/s, latency: 1 us, kind: ethernet}
  - {between: [g1, s0], bandwidth: 100 GB/s, latency: 1 us, kind: ethernet}
  - {between: [g2, s1], bandwidth: 100 GB/s, latency: 1 us, kind: ethernet}
  - {between: [g3, s1], bandwidth: 100 GB/s, latency: 1 us, kind: ethernet}
  - {between: [s0, s1], bandwidth: 10 GB/s, latency: 1 us, kind: ethernet}
)",
                                                              "two_switches.yaml"));
}

// Rank 0 sends 10 MB to rank 1.
sim::Job sender(const std::string& name, std::vector<std::uint32_t> gpus, Time start = Time{0}) {
    GraphBuilder b(2);
    b.p2p(OpKind::send, 0, 1, "send", 10'000'000);
    b.p2p(OpKind::recv, 1, 0, "recv", 10'000'000);
    return sim::Job{name, "a 10 MB send", b.g, std::move(gpus), start};
}
}  // namespace

TEST_CASE("two identical jobs sharing one bottleneck link each see half its bandwidth", "[sim][jobs]") {
    const auto cluster = two_switches();
    std::vector<sim::JobSlice> slices;
    std::vector<std::uint32_t> rank_to_gpu;
    std::vector<Time> rank_start;
    const auto merged = sim::merge_jobs({sender("a", {0, 2}), sender("b", {1, 3})}, slices, rank_to_gpu, rank_start);
    REQUIRE(merged.rank_count == 4);
    REQUIRE(rank_to_gpu == std::vector<std::uint32_t>{0, 2, 1, 3});
    REQUIRE(merged.comms[1].name == "b/p2p0-1");
    auto o = testing::exact_options();
    o.rank_to_gpu = rank_to_gpu;
    o.rank_start = rank_start;
    const auto together = sim::replay(merged, cluster, o);
    // Alone: 3 us of latency + 10 MB at 10 GB/s = 1,003 us. Together both share the cable: 2,003 us each.
    REQUIRE(together.timeline.makespan == 2003us);
    traces::RunSummary summary;
    sim::job_reports(slices, merged, together.timeline, cluster, o, summary);
    REQUIRE(summary.jobs.size() == 2);
    for (const auto& j : summary.jobs) {
        REQUIRE(j.alone == 1003us);
        REQUIRE(j.together == 2003us);
    }
    // The cable s0 -> s1 is where they interfere: each held the other at half rate for 2 ms.
    REQUIRE(!summary.interference.empty());
    REQUIRE(summary.interference.front().link == "s0 -> s1");
    REQUIRE(summary.interference.front().alone_s == 0);
    REQUIRE(summary.interference.front().together_s == Approx(2e-3).epsilon(1e-9));
}

TEST_CASE("a job's start time delays it alone; jobs apart do not interfere", "[sim][jobs]") {
    const auto cluster = two_switches();
    std::vector<sim::JobSlice> slices;
    std::vector<std::uint32_t> rank_to_gpu;
    std::vector<Time> rank_start;
    // b starts when a is done: nothing shared.
    const auto merged =
        sim::merge_jobs({sender("a", {0, 2}), sender("b", {1, 3}, 1003us)}, slices, rank_to_gpu, rank_start);
    auto o = testing::exact_options();
    o.rank_to_gpu = rank_to_gpu;
    o.rank_start = rank_start;
    const auto r = sim::replay(merged, cluster, o);
    REQUIRE(r.timeline.makespan == 2006us);
    REQUIRE(r.timeline.start(traces::OpId::from_index(2)) == 1003us);
    traces::RunSummary summary;
    sim::job_reports(slices, merged, r.timeline, cluster, o, summary);
    REQUIRE(summary.jobs[1].start == 1003us);
    REQUIRE(summary.jobs[1].together == 1003us);
    REQUIRE(summary.interference.empty());
}

TEST_CASE("placement policies: packed fills nodes, spread takes one per node, random is seeded", "[sim][jobs]") {
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=4"});
    std::vector<std::uint8_t> used(32, 0);
    REQUIRE(sim::place_job(cluster, used, 4, sim::Placement::packed, 1, "a") == std::vector<std::uint32_t>{0, 1, 2, 3});
    REQUIRE(sim::place_job(cluster, used, 4, sim::Placement::spread, 1, "b") ==
            std::vector<std::uint32_t>{4, 8, 16, 24});
    std::vector<std::uint8_t> fresh(32, 0), again(32, 0);
    const auto r1 = sim::place_job(cluster, fresh, 8, sim::Placement::random, 7, "c");
    REQUIRE(r1 == sim::place_job(cluster, again, 8, sim::Placement::random, 7, "c"));
    REQUIRE(r1.size() == 8);
    REQUIRE_THROWS_WITH(sim::place_job(cluster, used, 30, sim::Placement::packed, 1, "d"),
                        Contains("job 'd' needs 30 GPUs but only 24"));
}
