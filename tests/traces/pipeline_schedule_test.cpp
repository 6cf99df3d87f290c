// Pipeline schedules: the step orders of GPipe, 1F1B and interleaved 1F1B, and, replayed from a text workload
// with free communication, their iteration times against the closed forms (m + p - 1)(F + B) and
// m(F + B) + (p - 1)(F + B)/v.
#include <catch2/catch.hpp>

#include "sim/replay/replay.h"
#include "tests/sim/replay_fixture.h"
#include "tests/test_support.h"
#include "traces/formats/text_workload_reader.h"
#include "traces/pipeline_schedule.h"

using namespace clustersim;
using traces::PipelineSchedule;
using traces::PipelineStep;

namespace {
std::string text(const std::vector<PipelineStep>& steps) {
    std::string out;
    for (const auto& s : steps)
        out += (out.empty() ? "" : " ") + std::string(s.forward ? "F" : "B") + std::to_string(s.micro_batch) +
               (s.chunk ? "." + std::to_string(s.chunk) : "");
    return out;
}
}  // namespace

TEST_CASE("pipeline schedules order forwards and backwards as GPipe, 1F1B and Megatron's interleaving do",
          "[traces][pipeline]") {
    REQUIRE(text(traces::pipeline_schedule(PipelineSchedule::gpipe, 2, 0, 3)) == "F0 F1 F2 B0 B1 B2");
    // 1F1B on 4 stages: stage s warms up with 3 - s forwards.
    REQUIRE(text(traces::pipeline_schedule(PipelineSchedule::one_f_one_b, 4, 0, 4)) == "F0 F1 F2 F3 B0 B1 B2 B3");
    REQUIRE(text(traces::pipeline_schedule(PipelineSchedule::one_f_one_b, 4, 2, 4)) == "F0 F1 B0 F2 B1 F3 B2 B3");
    REQUIRE(text(traces::pipeline_schedule(PipelineSchedule::one_f_one_b, 4, 3, 4)) == "F0 B0 F1 B1 F2 B2 F3 B3");
    // Interleaved, 2 stages x 2 chunks, 4 micro-batches: micro-batches enter in pairs, through chunk 0 then 1;
    // the last stage warms up with (2 - 1 - 1) x 2 + (2 - 1) x 2 = 2 forwards, the first with 4.
    REQUIRE(text(traces::pipeline_schedule(PipelineSchedule::one_f_one_b, 2, 1, 4, 2)) ==
            "F0 F1 F0.1 B0.1 F1.1 B1.1 F2 B0 F3 B1 F2.1 B2.1 F3.1 B3.1 B2 B3");
    REQUIRE(text(traces::pipeline_schedule(PipelineSchedule::one_f_one_b, 2, 0, 4, 2)) ==
            "F0 F1 F0.1 F1.1 F2 B0.1 F3 B1.1 F2.1 B0 F3.1 B1 B2.1 B3.1 B2 B3");
}

TEST_CASE("replayed pipeline schedules meet their closed forms", "[traces][pipeline][sim]") {
    // text_pipeline.txt: 4 stages, 4 micro-batches, 2 lines of forward 1 us and backward 2 us per micro-batch
    // (F = 2 us, B = 4 us per stage), vpp 2, no collectives, 0-byte activations on zero-latency links.
    const auto cluster = topo::load_topology("ring", {"gpus=4", "bandwidth=100 GB/s", "latency=0 ns"});
    auto run = [&](PipelineSchedule schedule, std::uint32_t chunks) {
        traces::TextWorkloadOptions options;
        options.schedule = schedule;
        options.chunks = chunks;
        const auto g = traces::read_text_workload(testing::test_data("traces/text_pipeline.txt"), options);
        return sim::replay(g, cluster, testing::exact_options()).timeline.makespan;
    };
    using engine::Time;
    // (m + p - 1)(F + B) = 7 x 6 us.
    REQUIRE(run(PipelineSchedule::gpipe, 1) == Time{42'000'000});
    REQUIRE(run(PipelineSchedule::one_f_one_b, 1) == Time{42'000'000});
    // Interleaved over v = 2 chunks: m(F + B) + (p - 1)(F + B)/v = 24 + 9 us.
    REQUIRE(run(PipelineSchedule::one_f_one_b, 0) == Time{33'000'000});  // the header's vpp: 2
    REQUIRE(run(PipelineSchedule::one_f_one_b, 2) == Time{33'000'000});
}

TEST_CASE("interleaving splits a micro-batch at its layers' first lines", "[traces][pipeline]") {
    // text_interleave.txt: 2 stages x 2 chunks, 4 micro-batches of [emb, attn, mlp, attn, mlp, final] (ASTRA-sim's
    // layout: the lines do not repeat 4 times): "attn" opens each of the 2 layers, so chunk 0 is [emb, attn, mlp]
    // and chunk 1 [attn, mlp, final]. Stage 0 runs forwards of micro-batches 0, 1 through chunk 0, then through
    // chunk 1, then 2, 3 likewise.
    const auto g = traces::read_text_workload(testing::test_data("traces/text_interleave.txt"), {});
    std::string forwards;
    for (const auto& op : g.ops) {
        const std::string& name = g.names[op.name];
        if (g.rank_of(op).value == 0 && op.kind == traces::OpKind::compute && name.ends_with(" fwd"))
            forwards += (forwards.empty() ? "" : " ") + name.substr(0, name.size() - 4);
    }
    const std::string c0 = "emb attn mlp", c1 = "attn mlp final";
    REQUIRE(forwards == c0 + " " + c0 + " " + c1 + " " + c1 + " " + c0 + " " + c0 + " " + c1 + " " + c1);
}
