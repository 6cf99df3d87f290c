// The ranks a timeline shows under a budget of ops, and what the writer leaves out with them.
#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include "traces/perfetto_writer.h"
#include "traces/timeline.h"
#include "traces/timeline_ranks.h"

using namespace clustersim;
using Catch::Matchers::Contains;

namespace {

/// Ranks 0..3 with 3, 5, 2 and 4 compute ops.
traces::OpGraph four_ranks() {
    traces::OpGraph g;
    g.rank_count = 4;
    const int ops[] = {3, 5, 2, 4};
    for (std::uint32_t r = 0; r < 4; ++r) {
        const traces::RankId rank{r};
        for (int i = 0; i < ops[r]; ++i) g.add(traces::Op{g.stream(rank, "s"), g.intern("k"), traces::OpKind::compute});
    }
    return g;
}

/// The first op of `rank` (ops are added rank by rank).
traces::OpId first_op(const traces::OpGraph& g, std::uint32_t rank) {
    for (std::uint32_t i = 0; i < g.ops.size(); ++i)
        if (g.rank_of(g.ops[i]).value == rank) return traces::OpId{i};
    return traces::OpId::invalid();
}

}  // namespace

TEST_CASE("a timeline within its budget shows every rank", "[traces][perfetto]") {
    const traces::OpGraph g = four_ranks();
    for (const std::uint64_t budget : {std::uint64_t{0}, std::uint64_t{14}, std::uint64_t{100}}) {
        const traces::TimelineRanks shown = traces::timeline_ranks(g, {}, budget);
        CHECK(shown.all(g));
        CHECK(shown.ops_shown == 14);
        CHECK(shown.shown == std::vector<std::uint8_t>{1, 1, 1, 1});
    }
}

TEST_CASE("past its budget a timeline shows the critical path's ranks first, then others that fit",
          "[traces][perfetto]") {
    const traces::OpGraph g = four_ranks();
    traces::CriticalPath path;
    path.steps.push_back({first_op(g, 2)});
    path.steps.push_back({first_op(g, 1)});
    path.steps.push_back({first_op(g, 2)});
    // Rank 2 (2 ops), rank 1 (5: 7 in all); rank 0 (3) and rank 3 (4) would exceed 9.
    traces::TimelineRanks shown = traces::timeline_ranks(g, path, 9);
    CHECK(shown.shown == std::vector<std::uint8_t>{0, 1, 1, 0});
    CHECK(shown.ranks_shown == 2);
    CHECK(shown.ops_shown == 7);
    // 10: rank 0 fits after them (10), rank 3 does not.
    shown = traces::timeline_ranks(g, path, 10);
    CHECK(shown.shown == std::vector<std::uint8_t>{1, 1, 1, 0});
    // Without a critical path: ranks in order, each that fits (rank 2's 2 ops after rank 1's 5 would not: 10).
    shown = traces::timeline_ranks(g, {}, 9);
    CHECK(shown.shown == std::vector<std::uint8_t>{1, 1, 0, 0});
    CHECK(shown.ops_shown == 8);
    // The first rank is shown even when it alone exceeds the budget.
    shown = traces::timeline_ranks(g, path, 1);
    CHECK(shown.shown == std::vector<std::uint8_t>{0, 0, 1, 0});
}

TEST_CASE("a timeline of some ranks leaves out the others' slices, arrows and memory, and says so",
          "[traces][perfetto]") {
    traces::OpGraph g;
    g.rank_count = 2;
    const traces::RankId r0{0}, r1{1};
    const traces::OpId send = g.add(traces::Op{g.stream(r0, "comm"), g.intern("send \"x\"\n"), traces::OpKind::send});
    const traces::OpId recv = g.add(traces::Op{g.stream(r1, "comm"), g.intern("recv"), traces::OpKind::recv});
    g.add(traces::Op{g.stream(r0, "s"), g.intern("buffer0"), traces::OpKind::alloc});
    g.add(traces::Op{g.stream(r1, "s"), g.intern("buffer1"), traces::OpKind::alloc});
    traces::Timeline tl;
    for (int i = 0; i < 4; ++i)
        tl.append(traces::OpTiming{engine::Time{i * 1'000'000}, engine::Time{(i + 1) * 1'000'000}});
    tl.waits = {{recv, engine::Time{0}}};  // ready at 0, started at 1 us
    tl.transfers.push_back({send, recv, engine::Time{0}, engine::Time{2'000'000}});

    const std::string all = traces::perfetto_json(g, tl, {});
    CHECK_THAT(all, Contains("{\"ph\":\"M\",\"name\":\"clustersim\",\"pid\":0,\"args\":{}}"));
    CHECK_THAT(all, Contains("\"name\":\"send \\\"x\\\"\\n\",\"cat\":\"communication\",\"pid\":1"));
    CHECK_THAT(all, Contains("\"ph\":\"s\""));
    // Every rank listed as shown: the same bytes but the header.
    traces::PerfettoOptions both;
    both.ranks_shown = {1, 1};
    std::string listed = traces::perfetto_json(g, tl, both);
    const std::string header = "\"args\":{\"ranks_shown\":2,\"ranks\":2}";
    REQUIRE(listed.find(header) != std::string::npos);
    listed.replace(listed.find(header), header.size(), "\"args\":{}");
    CHECK(listed == all);

    traces::PerfettoOptions one;
    one.ranks_shown = {0, 1};
    const std::string json = traces::perfetto_json(g, tl, one);
    CHECK_THAT(json, Contains("\"args\":{\"ranks_shown\":1,\"ranks\":2}"));
    CHECK_THAT(json, Contains("\"name\":\"recv\",\"cat\":\"communication\",\"pid\":2"));
    CHECK_THAT(json, Contains("\"name\":\"memory\",\"pid\":2"));
    CHECK(json.find("\"pid\":1,") == std::string::npos);    // neither rank 0's slices, threads nor memory
    CHECK(json.find("\"ph\":\"s\"") == std::string::npos);  // the arrow lacks its send
    CHECK(json.find("\"ph\":\"f\"") == std::string::npos);
}

TEST_CASE("an op's contention is found among the ops that had some, in any order of lookup", "[traces][timeline]") {
    traces::Timeline tl;
    tl.contentions = {
        {traces::OpId{2}, engine::Time{7}}, {traces::OpId{5}, engine::Time{11}}, {traces::OpId{9}, engine::Time{3}}};
    // Ascending, with a cursor: each search starts where the last one ended.
    std::size_t at = 0;
    const std::int64_t expected[] = {0, 0, 7, 0, 0, 11, 0, 0, 0, 3, 0};
    for (std::uint32_t op = 0; op < 11; ++op) {
        INFO("op " << op);
        REQUIRE(tl.contention(traces::OpId{op}, at) == engine::Time{expected[op]});
    }
    REQUIRE(at == tl.contentions.size());
    // Without one (or out of order): a search of the whole list.
    REQUIRE(tl.contention(traces::OpId{5}) == engine::Time{11});
    REQUIRE(tl.contention(traces::OpId{2}) == engine::Time{7});
    REQUIRE(tl.contention(traces::OpId{4}) == engine::Time{0});
    REQUIRE(traces::Timeline{}.contention(traces::OpId{0}) == engine::Time{0});
}

TEST_CASE("starts, ready times and contentions are found from a cursor as a search of the whole list finds them",
          "[traces][timeline]") {
    // Random sparse lists, looked up in ascending runs that skip ops (as a rank's ops are visited) and restart from
    // the start (as the next rank's): every answer as a linear search gives it, the cursor never past the op's place.
    // An op's start is its critical predecessor's end (half the ops), or kept apart.
    std::mt19937_64 rng(11);
    for (int trial = 0; trial < 200; ++trial) {
        traces::Timeline tl;
        const std::uint32_t ops = 1 + static_cast<std::uint32_t>(rng() % 300);
        std::vector<engine::Time> start(ops);
        for (std::uint32_t i = 0; i < ops; ++i) {
            tl.ends.push_back(engine::Time{2000 + 10 * i});
            tl.critical_preds.push_back(i > 0 && rng() % 2 == 0 ? traces::OpId{static_cast<std::uint32_t>(rng() % i)}
                                                                : traces::OpId::invalid());
            start[i] = tl.critical_preds[i].valid() ? tl.ends[tl.critical_preds[i].index()] : engine::Time{1000 + i};
            if (!tl.critical_preds[i].valid()) tl.starts.emplace_back(traces::OpId{i}, start[i]);
            if (rng() % 4 == 0) tl.waits.emplace_back(traces::OpId{i}, engine::Time{i});
            if (rng() % 3 == 0) tl.contentions.emplace_back(traces::OpId{i}, engine::Time{2 * i + 1});
        }
        for (int run = 0; run < 4; ++run) {
            std::size_t wait_at = 0, contention_at = 0, start_at = 0, start_at_too = 0;
            const std::uint32_t stride = 1 + static_cast<std::uint32_t>(rng() % 40);
            for (std::uint32_t i = static_cast<std::uint32_t>(rng() % stride); i < ops; i += stride) {
                const traces::OpId op{i};
                const bool waited =
                    std::any_of(tl.waits.begin(), tl.waits.end(), [&](auto& e) { return e.first == op; });
                const bool contended =
                    std::any_of(tl.contentions.begin(), tl.contentions.end(), [&](auto& e) { return e.first == op; });
                INFO("trial " << trial << " op " << i);
                REQUIRE(tl.ready(op, wait_at, tl.start(op, start_at)) == (waited ? engine::Time{i} : start[i]));
                REQUIRE(tl.start(op, start_at_too) == start[i]);
                REQUIRE(tl.contention(op, contention_at) == (contended ? engine::Time{2 * i + 1} : engine::Time{0}));
                REQUIRE(wait_at <= tl.waits.size());
                REQUIRE(std::all_of(tl.waits.begin(), tl.waits.begin() + static_cast<std::ptrdiff_t>(wait_at),
                                    [&](auto& e) { return e.first.value < i; }));
            }
        }
        // In any order with one cursor (an op before the cursor's place is searched from the start).
        std::size_t wait_at = 0, contention_at = 0, start_at = 0;
        for (int k = 0; k < 50; ++k) {
            const auto i = static_cast<std::uint32_t>(rng() % ops);
            const traces::OpId op{i};
            const bool waited = std::any_of(tl.waits.begin(), tl.waits.end(), [&](auto& e) { return e.first == op; });
            const bool contended =
                std::any_of(tl.contentions.begin(), tl.contentions.end(), [&](auto& e) { return e.first == op; });
            INFO("trial " << trial << " random op " << i);
            REQUIRE(tl.ready(op, wait_at, tl.start(op, start_at)) == (waited ? engine::Time{i} : start[i]));
            REQUIRE(tl.timing(op, start_at) == traces::OpTiming{start[i], tl.ends[i]});
            REQUIRE(tl.contention(op, contention_at) == (contended ? engine::Time{2 * i + 1} : engine::Time{0}));
        }
    }
}
