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
    for (const auto& op : g.ops) n += op.rank.value == rank && op.kind == kind;
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
            if (op.rank.value == 0 && op.kind == traces::OpKind::collective) {
                bytes += op.bytes;
                REQUIRE(g.comms[op.comm.index()].ranks.size() == 8);
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
    REQUIRE_THROWS_WITH(
        traces::read_text_workload(testing::test_data("traces/text_bad_header.txt"), {}),
        Contains("text_bad_header.txt:1: expected a parallelism (DATA, MODEL") && Contains("got \"PARALLEL\""));
    REQUIRE_THROWS_WITH(traces::read_text_workload(testing::test_data("traces/text_short_line.txt"), {}),
                        Contains("text_short_line.txt:4: expected 12 fields") && Contains("got 7"));
    REQUIRE_THROWS_WITH(traces::read_text_workload(testing::test_data("traces/text_bad_comm.txt"), {}),
                        Contains("text_bad_comm.txt:3: unknown communication type \"ALLSHUFFLE\""));
}
