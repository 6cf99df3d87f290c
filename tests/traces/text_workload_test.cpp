// The ASTRA-sim / SimAI / AICB text workload format on the shared files (skipped without ../shared/data), and its
// error messages on fixtures.
#include <catch2/catch.hpp>

#include "tests/test_support.h"
#include "traces/formats/text_workload_reader.h"

using namespace clustersim;
using Catch::Matchers::Contains;

namespace {
std::size_t count(const traces::OpGraph& g, std::uint32_t rank, traces::OpKind kind) {
    std::size_t n = 0;
    for (const auto& op : g.ops) n += g.rank_of(op).value == rank && op.kind == kind;
    return n;
}
}  // namespace

TEST_CASE("SimAI and ASTRA-sim text workloads expand to per-rank graphs with the right groups", "[traces][text]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: text workload test skipped");
        return;
    }
    SECTION("SimAI microAllReduce: TP 8 on 8 GPUs, two forward all-reduces") {
        // Header: model_parallel_NPU_group 8, all_gpus 8. Two layers, each: forward 556,000 ns and an all-reduce
        // (16 MiB, 64 MiB) in the tensor-parallel group; input and weight gradients 1 ns without communication;
        // update 1 ns: 10 ops per rank.
        const auto g = traces::read_text_workload(testing::shared_data("simai/example/microAllReduce.txt"), {});
        REQUIRE(g.rank_count == 8);
        REQUIRE(g.ops.size() == 80);
        REQUIRE(count(g, 3, traces::OpKind::collective) == 2);
        std::uint64_t bytes = 0;
        for (const auto& op : g.ops) {
            if (g.rank_of(op).value == 0 && op.kind == traces::OpKind::collective) {
                bytes += op.bytes();
                REQUIRE(g.comms[op.comm().index()].ranks.size() == 8);
            }
        }
        REQUIRE(bytes == 16'777'216 + 67'108'864);
    }
    SECTION("ASTRA-sim ResNet-50 data parallel: one gradient all-reduce per layer over all ranks") {
        traces::TextWorkloadOptions options;
        options.world_size = 8;
        const auto g = traces::read_text_workload(
            testing::shared_data("astra-sim/text-workloads/Resnet50_DataParallel.txt"), options);
        REQUIRE(g.rank_count == 8);
        REQUIRE(count(g, 5, traces::OpKind::collective) == 54);
        REQUIRE(g.comms.size() == 1);
        REQUIRE(g.comms[0].ranks.size() == 8);
    }
    SECTION("AICB GPT-13B with TP 8 on 16 GPUs: tensor groups of 8, data-parallel pairs") {
        traces::TextWorkloadOptions options;
        options.world_size = 16;
        const auto g = traces::read_text_workload(
            testing::shared_data(
                "aicb/workload/simAI/model_workload/G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt"),
            options);
        for (const auto& c : g.comms) {
            INFO(c.name);
            REQUIRE((c.ranks.size() == 8 || c.ranks.size() == 2));
            if (c.name.rfind("dp.", 0) == 0) REQUIRE(c.ranks[1].value - c.ranks[0].value == 8);
        }
        REQUIRE_THROWS_WITH(
            traces::read_text_workload(
                testing::shared_data(
                    "aicb/workload/simAI/model_workload/G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt"),
                {}),
            Contains("G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt:1: the header has no all_gpus: give the world "
                     "size"));
    }
}

TEST_CASE("malformed text workloads name the file and the line", "[traces][text][input]") {
    // A header typo ("ppp:") used to leave pp at 1 silently.
    REQUIRE_THROWS_WITH(
        traces::read_text_workload(testing::test_data("traces/text_header_typo.txt"), {}),
        Contains("text_header_typo.txt:1: unknown header key 'ppp:' (known: model_parallel_NPU_group:"));
    REQUIRE_THROWS_WITH(
        traces::read_text_workload(testing::test_data("traces/text_bad_header.txt"), {}),
        Contains("text_bad_header.txt:1: expected a parallelism (DATA, MODEL") && Contains("got \"PARALLEL\""));
    // A compute time of 9e18 ns cannot be represented in picoseconds: refused, not wrapped into a short run.
    REQUIRE_THROWS_WITH(traces::read_text_workload(testing::test_data("traces/text_huge_compute.txt"), {}),
                        Contains("text_huge_compute.txt:3: compute time 9000000000000000000 is out of range"));
    // A size of 2^48 - 1 bytes is more than an op holds: refused where it is read.
    REQUIRE_THROWS_WITH(traces::read_text_workload(testing::test_data("traces/text_huge_size.txt"), {}),
                        Contains("text_huge_size.txt:3: communication size: 281474976710655 bytes is more than an op "
                                 "holds"));
    REQUIRE_THROWS_WITH(traces::read_text_workload(testing::test_data("traces/text_short_line.txt"), {}),
                        Contains("text_short_line.txt:4: expected 12 fields") && Contains("got 7"));
    REQUIRE_THROWS_WITH(traces::read_text_workload(testing::test_data("traces/text_bad_comm.txt"), {}),
                        Contains("text_bad_comm.txt:3: unknown communication type \"ALLSHUFFLE\""));
    // Header values that cannot describe a job (these crashed or were silently replaced before).
    REQUIRE_THROWS_WITH(
        traces::read_text_workload(testing::test_data("traces/text_bad_ep.txt"), {}),
        Contains("text_bad_ep.txt:1: ep: 3 expert-parallel ranks do not divide the 4 data-parallel replicas"));
    REQUIRE_THROWS_WITH(traces::read_text_workload(testing::test_data("traces/text_pp_out_of_range.txt"), {}),
                        Contains("text_pp_out_of_range.txt:1: pp: 4294967296 is out of range"));
    REQUIRE_THROWS_WITH(
        traces::read_text_workload(testing::test_data("traces/text_too_many_microbatches.txt"), {}),
        Contains("text_too_many_microbatches.txt:1: the workload expands to about") && Contains("too large to replay"));
}

TEST_CASE("A schedule of many micro-batches is sized even without layer lines", "[text]") {
    // Fuzzing findings: with no lines the estimate was 0 ops, and the schedule of 4e9 micro-batches built 44 GB,
    // with and without pipeline stages.
    for (const char* file : {"text_no_lines_many_microbatches.txt", "text_no_lines_no_pipeline.txt"}) {
        INFO(file);
        CHECK_THROWS_WITH(
            traces::read_text_workload(testing::test_data(std::string("traces/") + file), {}),
            Contains(std::string(file) + ":1: the workload expands to about") && Contains("too large to replay"));
    }
}

namespace {
const traces::Communicator& comm_named(const traces::OpGraph& g, const std::string& name) {
    for (const auto& c : g.comms) {
        if (c.name == name) return c;
    }
    FAIL("no communicator " << name);
    return g.comms.front();
}
}  // namespace

TEST_CASE("AICB workloads list every micro-batch: they expand to one iteration, not ga of them", "[traces][text]") {
    // text_unrolled_moe.txt (ga 2): grad_gather (prefix), two micro-batches of [embedding_layer, mlp_moelayer]
    // whose first embedding has another weight-gradient time (as AICB writes it), optimizer1 (suffix).
    // TP 2, PP 2, EP 2 on 16 GPUs: 4 data-parallel replicas.
    traces::TextWorkloadOptions options;
    options.simai = true;
    const auto g = traces::read_text_workload(testing::test_data("traces/text_unrolled_moe.txt"), options);
    REQUIRE(g.rank_count == 16);
    REQUIRE(g.job_ranks.empty());
    // Per rank: 6 lines x 3 computes + 6 updates, 8 collectives (grad_gather's weight gradient, two embedding
    // forwards, two all-to-alls forward and two backward, optimizer1's forward), 4 pipeline transfers.
    REQUIRE(g.ops.size() == 16 * 36);
    REQUIRE(count(g, 0, traces::OpKind::compute) == 24);
    REQUIRE(count(g, 0, traces::OpKind::collective) == 8);
    REQUIRE(count(g, 0, traces::OpKind::send) == 2);
    REQUIRE(count(g, 8, traces::OpKind::recv) == 2);
    // Every line's compute once: forward 1,040,001 ns, input gradient 800,003, weight gradient 710,001, updates 600.
    engine::Time compute{0};
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        if (g.rank_of(g.ops[i]).value == 0 && g.ops[i].kind == traces::OpKind::compute) compute += g.durations[i];
    }
    REQUIRE(compute == engine::Time{2'550'605'000});
    // SimAI sizes an all-gather by its output: 64 MiB over 4 replicas is 16 MiB from each; ASTRA-sim by the input.
    auto gather_bytes = [](const traces::OpGraph& graph) {
        for (const auto& op : graph.ops) {
            if (op.kind == traces::OpKind::collective && op.collective == traces::CollectiveKind::all_gather)
                return op.bytes();
        }
        return std::uint64_t{0};
    };
    REQUIRE(gather_bytes(g) == 16'777'216);
    REQUIRE(gather_bytes(traces::read_text_workload(testing::test_data("traces/text_unrolled_moe.txt"), {})) ==
            67'108'864);
}

TEST_CASE("symmetry reduction keeps the first data-parallel replicas and folds groups reaching the others",
          "[traces][text][fold]") {
    traces::TextWorkloadOptions options;
    options.replicas = 1;
    const auto g = traces::read_text_workload(testing::test_data("traces/text_unrolled_moe.txt"), options);
    // Replica 0 of each stage: job ranks (stage x 8 + t).
    REQUIRE(g.rank_count == 4);
    REQUIRE(g.job_size() == 16);
    REQUIRE(g.job_ranks == std::vector<std::uint32_t>{0, 1, 8, 9});
    REQUIRE(g.ops.size() == 4 * 36);
    const auto& dp = comm_named(g, "dp.s0.t0");
    REQUIRE(dp.ranks == std::vector<traces::RankId>{traces::RankId{0}});
    REQUIRE(dp.job_members == std::vector<std::uint32_t>{0, 2, 4, 6});
    const auto& ep = comm_named(g, "ep.s1.b0.t1");
    REQUIRE(ep.ranks == std::vector<traces::RankId>{traces::RankId{3}});
    REQUIRE(ep.job_members == std::vector<std::uint32_t>{9, 11});
    const auto& tp = comm_named(g, "tp.s0.d0");
    REQUIRE_FALSE(tp.folded());
    REQUIRE(tp.ranks == std::vector<traces::RankId>{traces::RankId{0}, traces::RankId{1}});
    // Two replicas cover an expert group: it is simulated whole; the data-parallel group stays folded.
    options.replicas = 2;
    const auto two = traces::read_text_workload(testing::test_data("traces/text_unrolled_moe.txt"), options);
    REQUIRE(two.rank_count == 8);
    REQUIRE_FALSE(comm_named(two, "ep.s1.b0.t1").folded());
    REQUIRE(comm_named(two, "dp.s1.t1").job_members == std::vector<std::uint32_t>{9, 11, 13, 15});
    // By default the job is reduced only when it would not fit the op budget.
    options.replicas = 0;
    options.max_ops = 500;
    REQUIRE(traces::read_text_workload(testing::test_data("traces/text_unrolled_moe.txt"), options).rank_count == 4);
}

TEST_CASE("the 9,216-GPU SimAI MoE workload expands to one replica of 24 ranks", "[traces][text][fold]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: SimAI MoE workload test skipped");
        return;
    }
    // TP 2, EP 16, PP 12, ga 24 on 9,216 GPUs: 384 replicas. 1,789 lines = 6 iteration-level lines, 24
    // micro-batches of 74 (embedding, 8 x (attention column, attention row, 7 MoE lines), final column) and 7
    // (loss and optimizer).
    traces::TextWorkloadOptions options;
    options.simai = true;
    const auto g = traces::read_text_workload(testing::shared_data("simai/example/workload_analytical.txt"), options);
    REQUIRE(g.rank_count == 24);
    REQUIRE(g.job_size() == 9216);
    REQUIRE(g.job_ranks[2] == 768);  // stage 1, replica 0, t 0
    // Per rank: 1,789 lines x 3 computes, 1,789 updates; collectives:
    // per micro-batch 8 layers x (2 attention + 7 MoE lines) x (forward + input gradient), the embedding's
    // forward, the final column's two; 12 in the iteration-level lines (6 gradient syncs, 3 loss, 4 optimizer
    // minus grad_param_compute's none).
    REQUIRE(count(g, 0, traces::OpKind::compute) == 4 * 1789);
    REQUIRE(count(g, 0, traces::OpKind::collective) == 24 * (8 * 9 * 2 + 1 + 2) + 12);
    // Interleaved 1F1B over the header's vpp 8: each micro-batch crosses each stage 8 times. Stage 0 sends every
    // chunk's activations to stage 1 (24 x 8) and the gradients of chunks 1-7 back to stage 11 (24 x 7); stage 1
    // sends both ways for every chunk.
    REQUIRE(count(g, 0, traces::OpKind::send) == 24 * 8 + 24 * 7);
    REQUIRE(count(g, 2, traces::OpKind::send) == 2 * 24 * 8);
    options.schedule = traces::PipelineSchedule::gpipe;
    options.chunks = 1;
    const auto gpipe =
        traces::read_text_workload(testing::shared_data("simai/example/workload_analytical.txt"), options);
    REQUIRE(count(gpipe, 0, traces::OpKind::send) == 24);
    REQUIRE(count(gpipe, 2, traces::OpKind::send) == 48);
    const auto& dp = comm_named(g, "dp.s0.t0");
    REQUIRE(dp.job_members.size() == 384);
    REQUIRE(comm_named(g, "ep.s0.b0.t0").job_members.size() == 16);
    REQUIRE(comm_named(g, "dp_ep.s0.r0.t0").job_members.size() == 24);
}
