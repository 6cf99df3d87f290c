// Kineto import on the real PyTorch profiler traces in ../shared/data (skipped with a message without it).
// Expected counts were read off the traces with an independent script (json.load, the first ProfilerStep's
// window, GPU events whose launch ends inside it).
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "sim/analysis.h"
#include "sim/replay/replay.h"
#include "tests/test_support.h"
#include "topologies/topology_loader.h"
#include "traces/formats/kineto_events.h"
#include "traces/formats/kineto_reader.h"
#include "traces/text_file.h"

using namespace clustersim;
using Catch::Matchers::Contains;
using traces::OpKind;

namespace {
std::size_t count_ops(const traces::OpGraph& g, std::uint32_t rank, bool (*pick)(const traces::Op&)) {
    std::size_t n = 0;
    for (const auto& op : g.ops) n += g.rank_of(op).value == rank && pick(op);
    return n;
}
}  // namespace

TEST_CASE("a Kineto trace with NCCL kernel args imports its iteration's GPU events and collectives",
          "[traces][kineto]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: Kineto import test skipped");
        return;
    }
    // hta_nccl_data_a100_2ranks_rank0, ProfilerStep#4: 1,258 GPU events launched in the step (900 kernels, 320
    // copies, 38 memsets), of which 7 NCCL kernels: 5 AllReduce and 2 Broadcast.
    const auto g = traces::read_kineto({testing::shared_data("kineto/hta_nccl_data_a100_2ranks_rank0.json.gz")}, {});
    REQUIRE(g.rank_count == 2);
    REQUIRE(count_ops(g, 0, [](const traces::Op& op) { return op.kind != OpKind::delay; }) == 1258);
    REQUIRE(count_ops(g, 0, [](const traces::Op& op) {
                return op.collective == traces::CollectiveKind::all_reduce && op.kind == OpKind::collective;
            }) == 5);
    REQUIRE(count_ops(g, 0, [](const traces::Op& op) {
                return op.collective == traces::CollectiveKind::broadcast && op.kind == OpKind::collective;
            }) == 2);
    // Sizes from the kernels' args: an all-reduce of 53,120 floats and a broadcast of 53 longs.
    REQUIRE(count_ops(g, 0, [](const traces::Op& op) {
                return op.kind == OpKind::collective && op.bytes() == 53'120 * 4;
            }) == 1);
    REQUIRE(count_ops(g, 0,
                      [](const traces::Op& op) { return op.kind == OpKind::collective && op.bytes() == 53 * 8; }) == 1);
    // Rank 1 has no file: it replays rank 0's ops (SPMD fill).
    REQUIRE(count_ops(g, 1, [](const traces::Op&) { return true; }) ==
            count_ops(g, 0, [](const traces::Op&) { return true; }));
}

TEST_CASE("the 8-rank DLRM job imports as one job and its faithful replay reproduces the traced time",
          "[traces][kineto][slow]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: DLRM replay test skipped");
        return;
    }
    std::vector<std::string> files;
    for (const char* f :
         {"worker0_step_12.1694128201545", "worker1_step_12.1694128201556", "worker2_step_12.1694128201554",
          "worker3_step_12.1694128201557", "worker4_step_12.1694128201547", "worker5_step_12.1694128201549",
          "worker6_step_12.1694128201553", "worker7_step_12.1694128201553"})
        files.push_back(testing::shared_data(std::string("kineto/dlrm_v100_8ranks/") + f + ".pt.trace.json.gz"));
    const auto g = traces::read_kineto(files, {});
    // Each rank: 261 GPU events in ProfilerStep#10, among them 5 SendRecv kernels inside nccl:all_to_all and 3
    // AllReduce kernels; validation has already checked that all 8 ranks issue them in the same order and sizes.
    REQUIRE(g.rank_count == 8);
    for (std::uint32_t r = 0; r < 8; ++r) {
        INFO("rank " << r);
        REQUIRE(count_ops(g, r, [](const traces::Op& op) {
                    return op.kind == OpKind::collective && op.collective == traces::CollectiveKind::all_to_all;
                }) == 5);
        REQUIRE(count_ops(g, r, [](const traces::Op& op) {
                    return op.kind == OpKind::collective && op.collective == traces::CollectiveKind::all_reduce;
                }) == 3);
    }
    // Faithful replay on one DGX-1 (8x V100, NVLink cube-mesh): kernels keep their measured times, collectives
    // are simulated. Target: within 5% of the traced iteration (first launch to last GPU event).
    const auto cluster = topo::load_topology("dgx1-v100", {});
    const auto result = sim::replay(g, cluster, sim::ReplayOptions{});
    const double error = engine::to_seconds(result.timeline.makespan) / engine::to_seconds(g.traced_iteration) - 1;
    REQUIRE(std::abs(error) < 0.05);
    // The analysis separates the NCCL kernels' time into waiting for peers and transfer.
    const auto summary = sim::summarize_run(g, result.timeline);
    for (const auto& r : summary.ranks) REQUIRE(r.peer_wait + r.exposed_communication + r.overlap > engine::Time{0});
    // The files share a clock, so the ranks' start skew is kept: each rank's peer wait in the replay is within 10%
    // of what the traces themselves show, the time from its k-th NCCL kernel's start to the last member's, summed.
    std::vector<std::vector<double>> starts(files.size());
    for (std::size_t f = 0; f < files.size(); ++f) {
        const auto parsed = traces::parse_kineto_events(traces::read_text_file(files[f]), files[f]);
        double step_start = 0, step_end = 0;
        for (const auto& e : parsed.events)
            if (e.name.rfind("ProfilerStep#", 0) == 0 && step_end == 0) {
                step_start = e.ts_us;
                step_end = e.ts_us + e.dur_us;
            }
        for (const auto& e : parsed.events)
            if (e.cat == "kernel" && e.name.rfind("ncclKernel", 0) == 0 && e.ts_us >= step_start && e.ts_us <= step_end)
                starts[static_cast<std::size_t>(parsed.rank)].push_back(e.ts_us);
        std::sort(starts[static_cast<std::size_t>(parsed.rank)].begin(),
                  starts[static_cast<std::size_t>(parsed.rank)].end());
    }
    for (std::size_t r = 0; r < files.size(); ++r) {
        double traced_wait_us = 0;
        for (std::size_t k = 0; k < starts[r].size(); ++k) {
            double last = 0;
            for (const auto& other : starts) last = std::max(last, other[k]);
            traced_wait_us += last - starts[r][k];
        }
        const double replayed_us = engine::to_seconds(summary.ranks[r].peer_wait) * 1e6;
        INFO("rank " << r << ": traced wait " << traced_wait_us << " us, replayed " << replayed_us << " us");
        REQUIRE(std::abs(replayed_us / traced_wait_us - 1) < 0.10);
    }
}

TEST_CASE("permuting a trace's stream ids leaves its replay unchanged", "[traces][kineto]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: stream permutation test skipped");
        return;
    }
    // The DLRM rank 0 trace with its streams' ids reversed (7 <-> 35 ...): waits are inferred towards any stream,
    // so times and attribution do not depend on which stream has the lower id.
    const std::string file =
        testing::shared_data("kineto/dlrm_v100_8ranks/worker0_step_12.1694128201545.pt.trace.json.gz");
    std::string text = traces::read_text_file(file);
    std::vector<std::string> ids;
    for (std::size_t at = text.find("\"stream\": "); at != std::string::npos; at = text.find("\"stream\": ", at + 1)) {
        const std::size_t begin = at + 10, end = text.find_first_not_of("0123456789", begin);
        const std::string id = text.substr(begin, end - begin);
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    REQUIRE(ids.size() >= 2);
    std::sort(ids.begin(), ids.end(), [](const auto& a, const auto& b) { return std::stoll(a) < std::stoll(b); });
    std::string permuted;
    std::size_t from = 0;
    for (std::size_t at = text.find("\"stream\": "); at != std::string::npos; at = text.find("\"stream\": ", at + 1)) {
        const std::size_t begin = at + 10, end = text.find_first_not_of("0123456789", begin);
        const auto it = std::find(ids.begin(), ids.end(), text.substr(begin, end - begin));
        permuted += text.substr(from, begin - from) + ids[ids.size() - 1 - static_cast<std::size_t>(it - ids.begin())];
        from = end;
    }
    permuted += text.substr(from);
    const std::string path = testing::write_temp_file("clustersim_permuted_streams.json", permuted);
    const auto cluster = topo::load_topology("dgx1-v100", {});
    traces::KinetoOptions options;
    options.world_size = 8;
    const auto a = traces::read_kineto({file}, options), b = traces::read_kineto({path}, options);
    const auto ra = sim::replay(a, cluster, sim::ReplayOptions{}), rb = sim::replay(b, cluster, sim::ReplayOptions{});
    REQUIRE(ra.timeline.makespan == rb.timeline.makespan);
    const auto sa = sim::summarize_run(a, ra.timeline), sb = sim::summarize_run(b, rb.timeline);
    REQUIRE(sa.ranks == sb.ranks);
}

TEST_CASE("malformed Kineto input fails with the file and what was expected", "[traces][kineto][input]") {
    REQUIRE_THROWS_WITH(traces::read_kineto({testing::test_data("traces/two_ranks.json")}, {}),
                        Contains("two_ranks.json: expected a Chrome trace object with a 'traceEvents' list"));
    REQUIRE_THROWS_WITH(traces::read_kineto({testing::test_data("traces/kineto_no_stream.json")}, {}),
                        Contains("kineto_no_stream.json: traceEvents[1]: GPU event without args.stream"));
    REQUIRE_THROWS_WITH(traces::read_kineto({testing::test_data("traces/bad_truncated.json")}, {}),
                        Contains("not valid JSON at byte"));
    traces::KinetoOptions options;
    options.iteration = 7;
    REQUIRE_THROWS_WITH(traces::read_kineto({testing::test_data("traces/kineto_tiny.json")}, options),
                        Contains("kineto_tiny.json: no ProfilerStep#7 in the trace (it has: 1)"));
    // Durations beyond what a run can represent, or negative, are located errors, not 1 us kernels.
    REQUIRE_THROWS_WITH(traces::read_kineto({testing::test_data("traces/kineto_huge_duration.json")}, {}),
                        Contains("kineto_huge_duration.json: traceEvents[3] 'kernelA(float*)': 'dur' 1e+30 us is out "
                                 "of range (expected 0 to 1e11 us)"));
    REQUIRE_THROWS_WITH(traces::read_kineto({testing::test_data("traces/kineto_negative_duration.json")}, {}),
                        Contains("traceEvents[4] 'kernelB(float*)': 'dur' -5 us is out of range"));
    // distributedInfo: a fractional world size or a rank past 2^32 is refused, not truncated or wrapped to 0.
    {
        std::string text = traces::read_text_file(testing::test_data("traces/kineto_tiny.json"));
        const auto write = [&](const char* name, const std::string& from, const std::string& to) {
            std::string t = text;
            t.replace(t.find(from), from.size(), to);
            return testing::write_temp_file(name, t);
        };
        REQUIRE_THROWS_WITH(
            traces::read_kineto({write("clustersim_ws.json", "\"world_size\": 1", "\"world_size\": 2.7")}, {}),
            Contains(
                "clustersim_ws.json: distributedInfo.world_size: expected an integer from 0 to 16777216, got 2.7"));
        REQUIRE_THROWS_WITH(
            traces::read_kineto({write("clustersim_rank.json", "\"rank\": 0", "\"rank\": 4294967296")}, {}),
            Contains("distributedInfo.rank: expected an integer from 0 to 16777216, got 4294967296"));
        // Ids past 2^53 (their conversion to an integer would be undefined) or with a fraction are refused, not
        // wrapped or truncated into another event's.
        REQUIRE_THROWS_WITH(
            traces::read_kineto({write("clustersim_corr.json", "\"correlation\": 1", "\"correlation\": 1.1e31")}, {}),
            Contains("clustersim_corr.json: traceEvents[") &&
                Contains("args.correlation 1.1e+31 is not an id (expected a whole number of at most 2^53)"));
        REQUIRE_THROWS_WITH(
            traces::read_kineto({write("clustersim_stream.json", "\"stream\": 7", "\"stream\": 7.5")}, {}),
            Contains("args.stream 7.5 is not an id"));
    }
    // A memcpy of 1e30 bytes is refused, not a copy of 0 bytes.
    REQUIRE_THROWS_WITH(traces::read_kineto({testing::test_data("traces/kineto_huge_memcpy.json")}, {}),
                        Contains("kineto_huge_memcpy.json: traceEvents[2]: a message of 1e+30 bytes is out of range"));
    // An SPMD fill too large to build is refused up front, not run out of memory.
    traces::KinetoOptions huge;
    huge.world_size = 4'000'000'000;
    REQUIRE_THROWS_WITH(traces::read_kineto({testing::test_data("traces/kineto_tiny.json")}, huge),
                        Contains("kineto_tiny.json: filling 4000000000 ranks from 1 file(s) expands to about") &&
                            Contains("too large to replay"));
}

TEST_CASE("a tiny Kineto trace keeps host gaps and infers a cross-stream wait", "[traces][kineto]") {
    // Stream 7: kernel A [10, 30] us. Stream 9: kernel B launched at 12 us but started at 30 us, right when A
    // ended: it waited for A. Step window from 0.
    const auto g = traces::read_kineto({testing::test_data("traces/kineto_tiny.json")}, {});
    REQUIRE(g.rank_count == 1);
    REQUIRE(g.traced_iteration == engine::Time{40'000'000});
    const auto cluster = topo::load_topology("dgx-h100", {});
    const auto result = sim::replay(g, cluster, sim::ReplayOptions{});
    REQUIRE(result.timeline.makespan == engine::Time{40'000'000});
    // B depends on A.
    bool b_waits_for_a = false;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        if (g.names[g.ops[i].name] == "kernelB") b_waits_for_a = g.deps(traces::OpId::from_index(i)).size() == 1;
    }
    REQUIRE(b_waits_for_a);
}

TEST_CASE("one rank's profile of a 128-rank job replays folded as it does filled", "[traces][kineto][fold]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: Kineto fold test skipped");
        return;
    }
    // hta_sampled_ws128_rank0: rank 0 of 128 (distributedInfo). SPMD fill builds 128 copies of its 1,172 ops;
    // folding simulates rank 0 only and times its collectives over the whole world by the cost model.
    const std::vector<std::string> files{testing::shared_data("kineto/hta_sampled_ws128_rank0.json.gz")};
    traces::KinetoOptions options;
    const auto filled = traces::read_kineto(files, options);
    options.fold = true;
    const auto folded = traces::read_kineto(files, options);
    REQUIRE(filled.rank_count == 128);
    REQUIRE(folded.rank_count == 1);
    REQUIRE(folded.job_size() == 128);
    REQUIRE(folded.ops.size() * 128 == filled.ops.size());
    REQUIRE(std::all_of(folded.comms.begin(), folded.comms.end(),
                        [](const traces::Communicator& c) { return c.ranks.size() == 1; }));
    const auto cluster = topo::load_topology("dgx-a100", {"nodes=16"});
    const auto a = sim::replay(filled, cluster, sim::ReplayOptions{});
    const auto b = sim::replay(folded, cluster, sim::ReplayOptions{});
    // Measured: 604.079 ms filled, 604.350 ms folded; traced 602.994 ms.
    REQUIRE(engine::to_seconds(b.timeline.makespan) == Approx(engine::to_seconds(a.timeline.makespan)).epsilon(0.002));
}

TEST_CASE("SendRecv kernels take their collective from the enclosing op; unsized ones keep their traced time",
          "[traces][kineto]") {
    // A SendRecv kernel inside nccl:all_reduce (no size anywhere), one inside nccl:_all_gather_base (output 2048
    // floats, input 1024) and one inside nccl:_reduce_scatter_base (output 512 floats, input 1024).
    traces::KinetoOptions options;
    options.world_size = 2;
    const auto g = traces::read_kineto({testing::test_data("traces/kineto_collectives.json")}, options);
    std::vector<std::pair<traces::CollectiveKind, std::uint64_t>> rank0;
    std::vector<traces::OpId> ids;
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        if (g.rank_of(g.ops[i]).value == 0 && g.ops[i].kind == traces::OpKind::collective) {
            rank0.emplace_back(g.ops[i].collective, g.ops[i].bytes());
            ids.push_back(traces::OpId::from_index(i));
        }
    using K = traces::CollectiveKind;
    REQUIRE(rank0 == std::vector<std::pair<K, std::uint64_t>>{
                         {K::all_reduce, 0}, {K::all_gather, 4096}, {K::reduce_scatter, 4096}});
    // The unsized all-reduce lasts its traced 50 us in the replay, not a 0-byte transfer.
    const auto cluster = topo::load_topology("dgx-h100", {});
    const auto result = sim::replay(g, cluster, sim::ReplayOptions{});
    const auto& t = result.timeline.timing(traces::OpId::from_index(ids.front().index()));
    REQUIRE(t.end - t.start == engine::Time{50'000'000});
}

TEST_CASE("back-to-back kernels keep the dispatch gap the trace shows", "[traces][kineto]") {
    // Three kernels launched early, each starting 1.5 us after the previous one ended: the replay keeps the gaps.
    const auto g = traces::read_kineto({testing::test_data("traces/kineto_back_to_back.json")}, {});
    const auto cluster = topo::load_topology("dgx-h100", {});
    const auto result = sim::replay(g, cluster, sim::ReplayOptions{});
    REQUIRE(g.traced_iteration == engine::Time{43'000'000});  // the step from 0 to the last end at 43 us
    REQUIRE(result.timeline.makespan == g.traced_iteration);
}

TEST_CASE("communication kernels outside NCCL are all-to-alls on the network, not compute", "[traces][kineto]") {
    // DeepEP's dispatch is recognised by name; a custom token shuffle by --comm-kernel. Neither has a size, so
    // each keeps its traced time in the replay; the GEMM between them stays compute.
    traces::KinetoOptions options;
    options.world_size = 2;
    options.comm_kernels = {"token_shuffle"};
    const auto g = traces::read_kineto({testing::test_data("traces/kineto_custom_comm.json")}, options);
    std::vector<OpKind> kinds;
    for (const auto& op : g.ops)
        if (g.rank_of(op).value == 0 && op.kind != OpKind::delay) kinds.push_back(op.kind);
    REQUIRE(kinds == std::vector<OpKind>{OpKind::collective, OpKind::compute, OpKind::collective});
    traces::KinetoOptions plain;
    plain.world_size = 2;
    const auto without = traces::read_kineto({testing::test_data("traces/kineto_custom_comm.json")}, plain);
    std::size_t collectives = 0;
    for (const auto& op : without.ops) collectives += without.rank_of(op).value == 0 && op.kind == OpKind::collective;
    REQUIRE(collectives == 1);  // only DeepEP's, by its built-in name
    const auto cluster = topo::load_topology("dgx-h100", {});
    const auto result = sim::replay(g, cluster, sim::ReplayOptions{});
    REQUIRE(result.timeline.makespan == engine::Time{105'000'000});  // 10 us to the last end at 105 us, as traced
}

TEST_CASE("recorded cudaStreamWaitEvent waits win over inference; the previous iteration's tail is clipped",
          "[traces][kineto]") {
    // The consumer (stream 20) starts 0.5 us after the bystander (stream 13) ended and 1 us after the producer
    // (stream 7): inference alone would pick the bystander, the cuda_sync record says the producer. A kernel with
    // no launch record runs on stream 7 before the first launched one: the previous iteration's tail.
    const auto g = traces::read_kineto({testing::test_data("traces/kineto_recorded_wait.json")}, {});
    auto op_named = [&](std::string_view name) {
        for (std::size_t i = 0; i < g.ops.size(); ++i) {
            if (g.names[g.ops[i].name] == name) return traces::OpId::from_index(i);
        }
        return traces::OpId{};
    };
    REQUIRE_FALSE(op_named("tail").valid());
    const auto consumer = op_named("consumer"), producer = op_named("producer");
    REQUIRE(consumer.valid());
    // It waits for the producer through the 1 us dispatch gap the trace shows after the producer's end.
    const auto gap = traces::OpId::from_index(consumer.index() - 1);
    REQUIRE(g.names[g.ops[gap.index()].name] == "dispatch gap");
    REQUIRE(g.duration(gap) == engine::Time{1'000'000});
    const auto deps = g.deps(gap);
    REQUIRE(deps.size() == 1);
    REQUIRE(deps[0] == producer);
    REQUIRE(g.deps(consumer).empty());
    const auto tail = op_named("previous iteration");
    REQUIRE(tail.valid());
    REQUIRE(g.duration(tail) == engine::Time{6'000'000});  // window start to the tail's end
    // The faithful replay still reproduces the step: the consumer ends at 51 us.
    const auto result = sim::replay(g, topo::load_topology("dgx-h100", {}), sim::ReplayOptions{});
    REQUIRE(result.timeline.makespan == engine::Time{51'000'000});
    // A what-if that shortens the producer moves the consumer; the bystander does not hold it.
    auto faster = g;
    faster.set_duration(producer, engine::Time{10'000'000});
    REQUIRE(sim::replay(faster, topo::load_topology("dgx-h100", {}), sim::ReplayOptions{}).timeline.makespan ==
            engine::Time{40'500'000});
}

TEST_CASE("two sampled ranks of one job replay together, with their own all-to-all sizes", "[traces][kineto][fold]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: sampled-ranks test skipped");
        return;
    }
    // Ranks 0 and 1 of a 128-rank job: their all-to-alls differ per member (3,072 vs 1,358,954,496 bytes in the
    // first call), which used to be an input error; one all-reduce's recovered size differs (105,033,720 vs
    // 107,822,144 bytes) and takes the larger. Folded over the other 126 ranks.
    traces::KinetoOptions options;
    options.fold = true;
    const auto g = traces::read_kineto({testing::shared_data("kineto/hta_sampled_ws128_rank0.json.gz"),
                                        testing::shared_data("kineto/hta_sampled_ws128_rank1.json.gz")},
                                       options);
    REQUIRE(g.rank_count == 2);
    REQUIRE(g.job_size() == 128);
    std::vector<std::uint64_t> first_a2a;
    for (const auto& op : g.ops) {
        if (op.kind == OpKind::collective && op.collective == traces::CollectiveKind::all_to_all &&
            first_a2a.size() < 2 && (first_a2a.empty() || g.rank_of(op).value != 0))
            first_a2a.push_back(op.bytes());
    }
    REQUIRE(first_a2a == std::vector<std::uint64_t>{3072, 1'358'954'496});
    const auto result = sim::replay(g, topo::load_topology("dgx-a100", {"nodes=16"}), sim::ReplayOptions{});
    // Measured: 610.402 ms against the traced 603.763 ms (+1.1%).
    REQUIRE(engine::to_seconds(result.timeline.makespan) ==
            Approx(engine::to_seconds(g.traced_iteration)).epsilon(0.05));
}
