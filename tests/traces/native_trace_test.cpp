// The native trace format: exact round trip, and every validation error with its message.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "sim/scenario/scenario.h"
#include "tests/test_support.h"
#include "traces/formats/trace_import.h"
#include "traces/native_trace.h"
#include "traces/text_file.h"

using namespace clustersim;
using Catch::Matchers::Contains;
using testing::test_data;

TEST_CASE("a native trace reads back to the same text it was written as", "[traces][native]") {
    const auto g = traces::read_native_trace(test_data("traces/two_ranks.json"));
    REQUIRE(g.rank_count == 2);
    REQUIRE(g.ops.size() == 6);
    REQUIRE(g.duration(traces::OpId{1}) == engine::Time{2'500'000});
    REQUIRE(!g.has_duration(traces::OpId{0}));
    REQUIRE(g.names[g.ops[2].algorithm()] == "ring");
    REQUIRE(g.deps(traces::OpId{2}).size() == 1);
    const std::string text = traces::native_trace_text(g);
    const auto again = traces::parse_native_trace(text, "again");
    REQUIRE(traces::native_trace_text(again) == text);
    REQUIRE(again.ops == g.ops);
    // An op's rank is its stream's: an op naming another rank than its stream's is refused at its place.
    std::size_t on_rank1 = 0;
    while (g.rank_of(traces::OpId::from_index(on_rank1)).value != 1) ++on_rank1;
    std::string wrong = text;
    const std::string said = fmt::format("\"id\": {}, \"rank\": 1,", on_rank1);
    REQUIRE(wrong.find(said) != std::string::npos);
    wrong.replace(wrong.find(said), said.size(), fmt::format("\"id\": {}, \"rank\": 0,", on_rank1));
    REQUIRE_THROWS_WITH(traces::parse_native_trace(wrong, "wrong"),
                        Contains(fmt::format("wrong: ops[{}].rank: op on stream {} of rank 1 says rank 0", on_rank1,
                                             g.ops[on_rank1].stream.value)));
}

TEST_CASE("malformed traces fail with the file, the place and what was expected", "[traces][native][input]") {
    const auto load = [](const char* name) {
        return traces::read_native_trace(test_data(std::string("traces/") + name));
    };
    REQUIRE_THROWS_WITH(
        load("bad_unknown_dep.json"),
        Contains("bad_unknown_dep.json: ops[2].deps[0]: op 2 depends on op 7, which is not listed before it"));
    REQUIRE_THROWS_WITH(
        load("bad_missing_member.json"),
        Contains("collective #0 on 'world' (rank 0 op 2 'grads' (all_reduce on 'world')) is not issued by rank 1"));
    REQUIRE_THROWS_WITH(
        load("bad_size_mismatch.json"),
        Contains(
            "collective #0 on 'world': rank 0 op 2 'grads' (all_reduce on 'world') has 4194304 bytes but rank 1 op 3"));
    REQUIRE_THROWS_WITH(load("bad_recv_without_send.json"),
                        Contains("rank 1 op 4 'act' (recv from rank 0) has no matching send on rank 0"));
    REQUIRE_THROWS_WITH(load("bad_op_kind.json"), Contains("bad_op_kind.json: ops[1].kind: unknown op kind 'matmul'"));
    REQUIRE_THROWS_WITH(
        load("bad_wrong_type.json"),
        Contains("bad_wrong_type.json: ops[1].bytes: expected an integer from 0 to 281474976710654, got \"lots\""));
    REQUIRE_THROWS_WITH(load("bad_truncated.json"), Contains("bad_truncated.json: not valid JSON at byte"));
    // Symmetry reduction: a simulated job rank must issue its collectives; job ranks must exist.
    REQUIRE_THROWS_WITH(load("bad_folded_member.json"),
                        Contains("bad_folded_member.json: communicator 'dp': job rank 4 is simulated (rank 1) but not "
                                 "among its ranks"));
    REQUIRE_THROWS_WITH(load("bad_job_rank.json"),
                        Contains("bad_job_rank.json: job rank 4 does not exist: the job has 4 ranks"));
}

namespace {
// Makes `op` wait for `on` as well, in place: OpGraph::add takes only ops added before.
void add_dependency(traces::OpGraph& g, traces::OpId op, traces::OpId on) {
    std::vector<std::vector<traces::OpId>> lists;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const auto deps = g.deps(traces::OpId::from_index(i));
        lists.emplace_back(deps.begin(), deps.end());
    }
    lists[op.index()].push_back(on);
    g.op_deps.clear();
    for (const auto& list : lists) g.op_deps.append(list);
}
}  // namespace

TEST_CASE("a dependency cycle through stream order is found", "[traces][validation][input]") {
    // Op 0 and op 1 on one stream (0 before 1), op 0 also on... deps may only name earlier ops, so the cycle
    // must use stream order: op 1 on stream A depends on op 0 on stream B, which comes after op 2 on B, and op
    // 2 depends on op 1.
    traces::OpGraph g;
    g.rank_count = 1;
    g.source = "cycle";
    const auto a = g.stream(traces::RankId{0}, "a"), b = g.stream(traces::RankId{0}, "b");
    traces::Op op{b, g.intern("x"), traces::OpKind::compute};
    const auto first_on_b = g.add(op);
    op.stream = a;
    const auto on_a = g.add(op, std::vector<traces::OpId>{});
    op.stream = b;
    g.add(op, std::vector<traces::OpId>{on_a});  // b: first_on_b, then this (after on_a)
    add_dependency(g, on_a, traces::OpId{2});    // on_a waits for the second op on b
    (void)first_on_b;
    REQUIRE_THROWS_WITH(traces::validate(g), Contains("dependency cycle through rank 0 op"));
}

TEST_CASE("a dependency on a later op is accepted when it makes no cycle", "[traces][validation][input]") {
    // Readers may list an op before one it depends on: validation then runs the full topological check (a graph
    // whose deps all name earlier ops is in order by construction and skips it).
    traces::OpGraph g;
    g.rank_count = 1;
    g.source = "forward";
    const auto a = g.stream(traces::RankId{0}, "a"), b = g.stream(traces::RankId{0}, "b");
    traces::Op op{a, g.intern("x"), traces::OpKind::compute};
    const auto first = g.add(op);
    op.stream = b;
    g.add(op);
    add_dependency(g, first, traces::OpId{1});  // op 0 waits for op 1
    REQUIRE_NOTHROW(traces::validate(g));
    // And op 1 waiting for op 0 as well closes a cycle.
    add_dependency(g, traces::OpId{1}, first);
    REQUIRE_THROWS_WITH(traces::validate(g), Contains("dependency cycle through rank 0 op"));
}

TEST_CASE("a collective issued by a rank outside its communicator is rejected", "[traces][validation][input]") {
    traces::OpGraph g;
    g.rank_count = 3;
    g.source = "members";
    g.comms.push_back({"pair", {traces::RankId{2}, traces::RankId{0}}, {}});
    for (std::uint32_t r = 0; r < 3; ++r) {
        traces::Op op{g.stream(traces::RankId{r}, "s"), g.intern("ar"), traces::OpKind::collective};
        op.set_comm(traces::CommId{0});
        op.set_bytes(64);
        if (r != 1) g.add(op);
    }
    REQUIRE_NOTHROW(traces::validate(g));
    traces::Op stray{g.stream(traces::RankId{1}, "s"), g.intern("ar"), traces::OpKind::collective};
    stray.set_comm(traces::CommId{0});
    g.add(stray);
    REQUIRE_THROWS_WITH(traces::validate(g),
                        Contains("rank 1 op 2 'ar' (all_reduce on 'pair'): rank 1 is not a member of 'pair'"));
}

TEST_CASE("out-of-range numbers and deeply nested values are located errors, never wrapped or a crash",
          "[traces][native][input]") {
    const std::string valid = traces::read_text_file(test_data("traces/two_ranks.json"));
    // Replaces the first occurrence of `from` in the valid trace and parses the result.
    const auto parse_with = [&](const std::string& from, const std::string& to) {
        std::string text = valid;
        const auto at = text.find(from);
        REQUIRE(at != std::string::npos);
        text.replace(at, from.size(), to);
        return traces::parse_native_trace(text, "hostile.json");
    };
    // A fuzzing finding: a number beyond a double is nlohmann's out_of_range, which escaped as an internal error.
    REQUIRE_THROWS_WITH(parse_with("\"bytes\": 4194304", "\"bytes\": 1e000000551615"),
                        Contains("hostile.json: not a readable JSON document") && Contains("number overflow"));
    REQUIRE_THROWS_WITH(parse_with("\"bytes\": 4194304", "\"bytes\": 18446744073709551615"),
                        Contains("hostile.json: ops[2].bytes: expected an integer from 0 to 281474976710654, got "
                                 "18446744073709551615"));
    REQUIRE_THROWS_WITH(parse_with("\"duration_ps\": 2500000", "\"duration_ps\": 9223372036854775808"),
                        Contains("ops[1].duration_ps: expected an integer from 0 to 4611686018427387904"));
    REQUIRE_THROWS_WITH(parse_with("\"rank\": 1, \"stream\": 1", "\"rank\": 4294967296, \"stream\": 1"),
                        Contains("ops[1].rank: expected an integer from 0 to 4294967294, got 4294967296"));
    REQUIRE_THROWS_WITH(parse_with("\"ranks\": 2", "\"ranks\": 4294967298"),
                        Contains("hostile.json: ranks: expected an integer from 0 to 16777216"));
    REQUIRE_THROWS_WITH(parse_with("\"flops\": 1000000000000", "\"flops\": 1e300"),
                        Contains("ops[0].flops: expected a number from 0 to 1e+20, got 1e+300"));
    REQUIRE_THROWS_WITH(parse_with("\"flops\": 1000000000000", "\"flops\": -5"),
                        Contains("ops[0].flops: expected a number from 0 to 1e+20, got -5"));
    // Fields of another kind of op (an Op keeps them in shared storage: a send's FLOPs would overwrite its peer).
    REQUIRE_THROWS_WITH(
        parse_with("\"name\": \"act\", \"kind\": \"send\"", "\"name\": \"act\", \"kind\": \"send\", \"flops\": 5"),
        Contains("hostile.json: ops[4].flops: only compute ops have 'flops'; this op is a send"));
    REQUIRE_THROWS_WITH(parse_with("\"collective\": \"all_reduce\", \"algorithm\": \"ring\"",
                                   "\"collective\": \"all_reduce\", \"gemm\": [1, 2, 3, 1]"),
                        Contains("hostile.json: ops[2].gemm: only compute ops have 'gemm'; this op is a collective"));
    REQUIRE_THROWS_WITH(parse_with("\"class\": \"gemm\", \"flops\": 1000000000000, \"dtype\": \"bf16\"",
                                   "\"algorithm\": \"ring\", \"dtype\": \"bf16\""),
                        Contains("hostile.json: ops[0].algorithm: only collectives have 'algorithm'; this op is a "
                                 "compute"));
    // A field of the wrong type holding 100,000 nested lists: the message names its kind, not its text.
    const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
    REQUIRE_THROWS_WITH(parse_with("\"name\": \"fwd\"", "\"name\": " + deep),
                        Contains("ops[0].name: expected a string, got a list of 1 elements"));
    // Unknown keys anywhere are located errors listing the known ones, not silently ignored.
    REQUIRE_THROWS_WITH(parse_with("\"ranks\": 2", "\"ranks\": 2, \"rnaks\": 3"),
                        Contains("hostile.json: rnaks: unknown key 'rnaks' (known: format, version, ranks,"));
    REQUIRE_THROWS_WITH(parse_with("\"ranks\": [0, 1]", "\"ranks\": [0, 1], \"colour\": 1"),
                        Contains("communicators[0].colour: unknown key 'colour' (known: name, ranks, job_members)"));
    REQUIRE_THROWS_WITH(
        parse_with("{\"rank\": 0, \"name\": \"compute\"}", "{\"rank\": 0, \"name\": \"compute\", \"prio\": 1}"),
        Contains("streams[0].prio: unknown key 'prio' (known: rank, name)"));
}

TEST_CASE("eager sends, GEMM shapes and memory uses round-trip through the native format", "[traces][native]") {
    // The writer emits every field the reader accepts (an eager send from a Chakra import was refused before).
    auto g = traces::read_native_trace(test_data("traces/two_ranks.json"));
    g.ops[4].eager = true;
    g.ops[0].set_shape(g.intern(traces::GemmShape{2048, 4096, 1024, 2}));
    const std::string text = traces::native_trace_text(g);
    const auto back = traces::parse_native_trace(text, "round-trip.json");
    REQUIRE(back.ops[4].eager);
    REQUIRE(back.gemm_shapes[back.ops[0].shape()] == traces::GemmShape{2048, 4096, 1024, 2});
    REQUIRE(traces::native_trace_text(back) == text);
}

TEST_CASE("every reader's and generator's graph round-trips through the native format", "[traces][native]") {
    std::vector<std::pair<std::string, traces::OpGraph>> graphs;
    graphs.emplace_back("kineto", traces::import_traces({test_data("traces/kineto_collectives.json")}, {}));
    graphs.emplace_back("kineto waits", traces::import_traces({test_data("traces/kineto_recorded_wait.json")}, {}));
    graphs.emplace_back("simai", traces::import_traces({test_data("traces/text_unrolled_moe.txt")}, {}));
    graphs.emplace_back("astra text", traces::import_traces({test_data("traces/text_pipeline.txt")}, {}));
    for (const char* example : {"01-dgx-h100-pipeline-dp", "05-llama3-70b-zero1-64-h100", "06-mixtral-ep8-32-h100"})
        graphs.emplace_back(
            example,
            sim::load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/" + example + "/scenario.yaml", {})
                .graph);
    if (testing::shared_data_available()) {
        std::vector<std::string> files;
        for (int r = 0; r < 8; ++r)
            files.push_back(testing::shared_data("astra-sim/resnet50_dp8/resnet50." + std::to_string(r) + ".et"));
        graphs.emplace_back("chakra", traces::import_traces(files, {}));
    } else {
        WARN("../shared/data not found: the Chakra round trip is skipped");
    }
    for (const auto& [what, g] : graphs) {
        INFO(what);
        const std::string text = traces::native_trace_text(g);
        const auto back = traces::parse_native_trace(text, what);
        REQUIRE(back.ops.size() == g.ops.size());
        REQUIRE(back.durations == g.durations);
        for (std::size_t i = 0; i < g.ops.size(); ++i) {
            if (back.ops[i] == g.ops[i]) continue;
            INFO("op " << i << ": " << g.describe(traces::OpId::from_index(i)));
            const traces::Op &a = back.ops[i], &b = g.ops[i];
            CHECK(a.kind == b.kind);
            CHECK(a.kernel_class == b.kernel_class);
            CHECK(a.dtype == b.dtype);
            CHECK(a.collective == b.collective);
            CHECK(a.memory() == b.memory());
            CHECK(a.name == b.name);
            CHECK(a.shape() == b.shape());
            CHECK(a.bytes() == b.bytes());
            CHECK(a.flops() == b.flops());
            CHECK(a.comm() == b.comm());
            CHECK(a.peer() == b.peer());
            CHECK(a.tag() == b.tag());
            CHECK(a.algorithm() == b.algorithm());
            REQUIRE(false);
        }
        REQUIRE(back.comms == g.comms);
        REQUIRE(back.streams == g.streams);
        REQUIRE(back.op_deps == g.op_deps);
        REQUIRE(back.gemm_shapes == g.gemm_shapes);
        REQUIRE(back.job_ranks == g.job_ranks);
        REQUIRE(traces::native_trace_text(back) == text);
    }
}
