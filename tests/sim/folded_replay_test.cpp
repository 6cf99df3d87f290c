// Symmetry reduction in the replay: a job replayed with one data-parallel replica (the others folded, their
// collectives timed by the cost model) against the same job replayed whole, and the 9,216-GPU SimAI MoE job.
#include <algorithm>

#include <catch2/catch.hpp>

#include "sim/analysis.h"
#include "sim/replay/replay.h"
#include "tests/sim/replay_fixture.h"
#include "tests/test_support.h"
#include "topologies/topology_loader.h"
#include "traces/formats/text_workload_reader.h"
#include "traces/native_trace.h"

using namespace clustersim;

namespace {
traces::OpGraph moe_job(std::uint32_t replicas) {
    traces::TextWorkloadOptions options;
    options.simai = true;
    options.world_size = 64;  // TP 2 x PP 2 x 16 replicas on 8 DGX-H100 nodes
    options.replicas = replicas;
    return traces::read_text_workload(testing::test_data("traces/text_unrolled_moe.txt"), options);
}

// Duration of the first op named `name` on rank 0.
engine::Time first_duration(const traces::OpGraph& g, const traces::Timeline& tl, const std::string& name) {
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        if (g.rank_of(g.ops[i]).value == 0 && g.names[g.ops[i].name] == name)
            return tl.ends[i] - tl.start(traces::OpId::from_index(i));
    }
    FAIL("no op " << name);
    return {};
}
}  // namespace

TEST_CASE("a job replayed with one replica agrees with the whole job", "[sim][fold]") {
    const topo::Cluster cluster = topo::load_topology("dgx-h100", {"nodes=8"});
    const traces::OpGraph whole = moe_job(16), folded = moe_job(1);
    REQUIRE(whole.rank_count == 64);
    REQUIRE(folded.rank_count == 4);
    const sim::ReplayResult a = sim::replay(whole, cluster, sim::ReplayOptions{});
    const sim::ReplayResult b = sim::replay(folded, cluster, sim::ReplayOptions{});
    // Measured: 4.272 ms whole, 4.306 ms folded (+0.8%): the folded all-gather over 16 replicas on 4 nodes takes
    // NCCL's model time (more per-step latency than the simulated ring).
    const double whole_s = engine::to_seconds(a.timeline.makespan), folded_s = engine::to_seconds(b.timeline.makespan);
    REQUIRE(folded_s == Approx(whole_s).epsilon(0.02));
    // A folded all-to-all (two GPUs of one node) costs what the simulation gives the same call, to the nanosecond.
    const engine::Time simulated = first_duration(whole, a.timeline, "mlp_moelayer fwd ALLTOALL_EP");
    const engine::Time modelled = first_duration(folded, b.timeline, "mlp_moelayer fwd ALLTOALL_EP");
    REQUIRE(std::abs((simulated - modelled).count()) < 1000);
    // Ops of the simulated ranks keep their order and count; flows only among the simulated GPUs.
    REQUIRE(b.flows < a.flows);
    const auto summary = sim::summarize_run(folded, b.timeline);
    REQUIRE(summary.ranks.size() == 4);
    REQUIRE(summary.ranks[2].rank == 32);  // the job rank of stage 1's replica 0
    // Same inputs, same outputs.
    const sim::ReplayResult again = sim::replay(folded, cluster, sim::ReplayOptions{});
    REQUIRE(again.timeline.makespan == b.timeline.makespan);
    // The native format keeps the reduction.
    const std::string text = traces::native_trace_text(folded);
    const traces::OpGraph back = traces::parse_native_trace(text, "folded.json");
    REQUIRE(back.job_ranks == folded.job_ranks);
    REQUIRE(back.comms == folded.comms);
    REQUIRE(traces::native_trace_text(back) == text);
}

TEST_CASE("folded calls simulated alone on their whole group match the whole job", "[sim][fold]") {
    // With FoldModel::flows each folded call shape is replayed alone on its whole communicator: the iteration
    // matches the whole job to 0.4% (4.258 vs 4.272 ms on 64 GPUs; 4.287 vs 4.293 ms on 256: what is left is the
    // contention the folded calls do not meet), and the folded data-parallel all-gather takes what the same call
    // takes alone in the whole-job graph.
    const topo::Cluster cluster = topo::load_topology("dgx-h100", {"nodes=8"});
    sim::ReplayOptions options;
    options.fold_model = sim::ReplayOptions::FoldModel::flows;
    const traces::OpGraph whole = moe_job(16), folded = moe_job(1);
    const sim::ReplayResult a = sim::replay(whole, cluster, sim::ReplayOptions{});
    const sim::ReplayResult b = sim::replay(folded, cluster, options);
    REQUIRE(engine::to_seconds(b.timeline.makespan) == Approx(engine::to_seconds(a.timeline.makespan)).epsilon(0.005));
    // Alone: the same 16-member all-gather as the only op of a 64-rank graph, run with the default options.
    traces::OpGraph alone;
    alone.source = "alone";
    alone.rank_count = 64;
    std::vector<traces::RankId> members;
    for (std::uint32_t d = 0; d < 16; ++d) members.push_back(traces::RankId{d * 2});  // dp.s0.t0: job ranks 0, 2, ...
    const traces::CommId c = alone.communicator("dp.s0.t0", members);
    for (const traces::RankId r : members) {
        traces::Op op{alone.stream(r, "dp"), alone.intern("grad_gather wg ALLGATHER"), traces::OpKind::collective,
                      traces::KernelClass::communication};
        op.collective = traces::CollectiveKind::all_gather;
        op.set_bytes(67'108'864 / 16);
        op.set_comm(c);
        alone.add(op);
    }
    const sim::ReplayResult lone = sim::replay(alone, cluster, sim::ReplayOptions{});
    REQUIRE(first_duration(folded, b.timeline, "grad_gather wg ALLGATHER") == lone.timeline.makespan);
}

TEST_CASE("a folded job needs a topology with all the job's GPUs", "[sim][fold][input]") {
    const topo::Cluster small = topo::load_topology("dgx-h100", {"nodes=2"});
    REQUIRE_THROWS_WITH(sim::replay(moe_job(1), small, sim::ReplayOptions{}),
                        Catch::Matchers::Contains("the job has 64 ranks (4 simulated) but the topology") &&
                            Catch::Matchers::Contains("has only 16 GPUs"));
}

TEST_CASE("the 9,216-GPU SimAI MoE workload replays on 1,152 DGX-H100 nodes", "[sim][fold]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: SimAI MoE replay skipped");
        return;
    }
    traces::TextWorkloadOptions options;
    options.simai = true;
    const traces::OpGraph g =
        traces::read_text_workload(testing::shared_data("simai/example/workload_analytical.txt"), options);
    const topo::Cluster cluster = topo::load_topology("dgx-h100", {"nodes=1152"});
    const sim::ReplayResult r = sim::replay(g, cluster, sim::ReplayOptions{});
    // Every op ran; every collective call ended after its last member arrived.
    engine::Time serial{0};
    for (std::size_t i = 0; i < r.timeline.size(); ++i) {
        const traces::OpTiming t = r.timeline.timing(traces::OpId::from_index(i));
        REQUIRE(t.end >= t.start);
        serial += t.end - t.start;
    }
    REQUIRE(
        std::all_of(r.collectives.begin(), r.collectives.end(), [](const auto& c) { return c.end >= c.last_arrival; }));
    // The iteration is at least the busiest rank's compute (the file's times) and at most everything serialized.
    const auto summary = sim::summarize_run(g, r.timeline);
    engine::Time compute{0};
    for (const auto& rank : summary.ranks) compute = std::max(compute, rank.compute);
    REQUIRE(r.timeline.makespan >= compute);
    REQUIRE(r.timeline.makespan <= serial);
    REQUIRE(summary.ranks.back().rank == 11 * 768 + 1);
}

TEST_CASE("the cost-model collective mode times every call by NCCL's model, close to the simulated one",
          "[sim][fold]") {
    // 16 GPUs of 2 DGX-H100 nodes all-reduce 1 GiB: simulated as flows (8 rail-aligned rings, 383 GB/s busbw)
    // and by the cost model (NCCL's ring formula, bounded by NVLink at 82% as NCCL's min(intra, inter) has it):
    // 5.588 vs 5.259 ms, within 8%; a one-member communicator's call takes no time in either.
    const topo::Cluster cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    traces::OpGraph g;
    g.source = "cost model test";
    g.rank_count = 16;
    std::vector<traces::RankId> all;
    for (std::uint32_t r = 0; r < 16; ++r) all.push_back(traces::RankId{r});
    const traces::CommId world = g.communicator("world", all), alone = g.communicator("alone", {traces::RankId{0}});
    for (const traces::RankId r : all) {
        traces::Op op{g.stream(r, "comm"), g.intern("grads"), traces::OpKind::collective,
                      traces::KernelClass::communication};
        op.collective = traces::CollectiveKind::all_reduce;
        op.set_bytes(1ULL << 30);
        op.set_comm(world);
        g.add(op);
    }
    traces::Op single{g.stream(traces::RankId{0}, "comm"), g.intern("self"), traces::OpKind::collective,
                      traces::KernelClass::communication};
    single.set_bytes(1 << 20);
    single.set_comm(alone);
    g.add(single);
    sim::ReplayOptions modelled;
    modelled.collective_model = sim::ReplayOptions::CollectiveModel::cost_model;
    const auto flows = sim::replay(g, cluster, sim::ReplayOptions{});
    const auto model = sim::replay(g, cluster, modelled);
    REQUIRE(model.flows == 0);
    REQUIRE(engine::to_seconds(model.timeline.makespan) ==
            Approx(engine::to_seconds(flows.timeline.makespan)).epsilon(0.08));
    const traces::OpTiming last = model.timeline.timing(traces::OpId::from_index(model.timeline.size() - 1));
    REQUIRE(last.end - last.start == engine::Time{0});
}

TEST_CASE("a replay reports its progress every 2^16 events, monotonically", "[sim][progress]") {
    // 64 all-reduces of 16 MiB over 16 GPUs of 2 DGX-H100 nodes (8 channels each) run over 2^16 events: one report
    // per 2^16 events, each with no fewer ops done and no earlier simulated time than the one before.
    struct Seen {
        std::vector<sim::ReplayProgress> reports;
    } seen;
    sim::ReplayOptions options;
    options.network.flow_classes = false;  // one event per flow: classes would bring the count below 2^16
    options.progress = {
        [](void* context, const sim::ReplayProgress& p) { static_cast<Seen*>(context)->reports.push_back(p); }, &seen};
    traces::OpGraph g;
    g.source = "progress test";
    g.rank_count = 16;
    std::vector<traces::RankId> all;
    for (std::uint32_t r = 0; r < 16; ++r) all.push_back(traces::RankId{r});
    const traces::CommId world = g.communicator("world", all);
    for (int call = 0; call < 64; ++call) {
        for (const traces::RankId r : all) {
            traces::Op op{g.stream(r, "comm"), g.intern("grads"), traces::OpKind::collective,
                          traces::KernelClass::communication};
            op.set_bytes(1 << 24);
            op.set_comm(world);
            g.add(op);
        }
    }
    const auto result = sim::replay(g, topo::load_topology("dgx-h100", {"nodes=2"}), options);
    REQUIRE(result.events >= (1U << 16));
    REQUIRE(seen.reports.size() == result.events / (1U << 16));
    for (std::size_t k = 0; k < seen.reports.size(); ++k) {
        REQUIRE(seen.reports[k].ops == g.ops.size());
        REQUIRE(seen.reports[k].events == (k + 1) << 16);
        if (k > 0) REQUIRE(seen.reports[k].now >= seen.reports[k - 1].now);
        if (k > 0) REQUIRE(seen.reports[k].ops_done >= seen.reports[k - 1].ops_done);
    }
}

TEST_CASE("the modelled all-to-all takes the links the call crosses, across rails too", "[sim][fold]") {
    // One 1 GiB all-to-all over 2 DGX-A100 nodes (16 GPUs, 8 rails): modelled (the cost-model mode, which folded
    // calls share) against the same call as flows. It used to take one cross-rail route's bottleneck (a single
    // spine cable) for all the node's traffic: 3.5 times the simulated time.
    testing::GraphBuilder b(16);
    std::vector<std::uint32_t> members;
    for (std::uint32_t r = 0; r < 16; ++r) members.push_back(r);
    for (std::uint32_t r = 0; r < 16; ++r)
        b.collective(r, "nccl", "world", members, 1u << 30, traces::CollectiveKind::all_to_all);
    const auto cluster = topo::load_topology("dgx-a100", {"nodes=2"});
    sim::ReplayOptions flows, modelled;
    modelled.collective_model = sim::ReplayOptions::CollectiveModel::cost_model;
    const double simulated = engine::to_seconds(sim::replay(b.g, cluster, flows).timeline.makespan);
    const double model = engine::to_seconds(sim::replay(b.g, cluster, modelled).timeline.makespan);
    INFO("simulated " << simulated * 1e3 << " ms, modelled " << model * 1e3 << " ms");
    REQUIRE(std::abs(model / simulated - 1) < 0.25);
}
