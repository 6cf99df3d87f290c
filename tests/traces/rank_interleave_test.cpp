// interleave_ranks: the ranks' ops take turns, each rank's order and every dependency kept, ops before the tail
// untouched.
#include <catch2/catch.hpp>

#include "engine/error.h"
#include "traces/rank_interleave.h"

using namespace clustersim;
using traces::OpId;
using traces::RankId;

namespace {

// A graph of `ranks` ranks with a stream each: rank r's is stream r.
traces::OpGraph graph_of(std::uint32_t ranks) {
    traces::OpGraph g;
    g.rank_count = ranks;
    for (std::uint32_t r = 0; r < ranks; ++r) g.stream(RankId{r}, "s");
    return g;
}

// An op tagged by its bytes (rank * 100 + its place in the rank), so that it can be followed across the reordering.
traces::Op tagged(std::uint32_t rank, std::uint32_t k) {
    traces::Op op{traces::StreamId{rank}, 0, traces::OpKind::compute};
    op.set_bytes(rank * 100 + k);
    return op;
}

}  // namespace

TEST_CASE("interleaved ranks take turns and keep their order and dependencies", "[traces][interleave]") {
    traces::OpGraph g = graph_of(4);
    const OpId before = g.add(tagged(3, 0));  // an op before the tail, which tail ops depend on
    // Ranks 2, 0 and 1 with 3, 5 and 2 ops: each op depends on the one before it in its rank, the third of rank 0
    // also on its first, and the first of each on the op before the tail.
    std::vector<std::uint32_t> ranks = {2, 0, 1}, sizes = {3, 5, 2};
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        OpId previous = before, first;
        for (std::uint32_t k = 0; k < sizes[r]; ++k) {
            std::vector<OpId> deps = {previous};
            if (ranks[r] == 0 && k == 2) deps.push_back(first);
            // Measured durations (in ps, the tag again) travel with their ops.
            previous = g.add(tagged(ranks[r], k), deps, engine::Time{ranks[r] * 100 + k});
            if (k == 0) first = previous;
        }
    }
    traces::InterleaveScratch scratch;
    traces::interleave_ranks(g, 1, scratch);

    // Turns: 2.0 0.0 1.0 | 2.1 0.1 1.1 | 2.2 0.2 | 0.3 | 0.4.
    const std::vector<std::uint64_t> expected = {200, 0, 100, 201, 1, 101, 202, 2, 3, 4};
    REQUIRE(g.ops.size() == 11);
    REQUIRE(g.ops[0].bytes() == 300);
    for (std::size_t i = 0; i < expected.size(); ++i) REQUIRE(g.ops[1 + i].bytes() == expected[i]);
    REQUIRE(g.durations.size() == g.ops.size());
    REQUIRE(!g.has_duration(OpId{0}));
    for (std::size_t i = 1; i < g.ops.size(); ++i) REQUIRE(g.durations[i].count() == std::int64_t(g.ops[i].bytes()));
    // Every dependency names the same op as before, and an earlier one.
    for (std::uint32_t i = 1; i < g.ops.size(); ++i) {
        const auto deps = g.deps(OpId::from_index(i));
        const std::uint64_t tag = g.ops[i].bytes(), k = tag % 100;
        std::vector<std::uint64_t> dep_tags;
        for (const OpId d : deps) {
            REQUIRE(d.index() < i);
            dep_tags.push_back(g.ops[d.index()].bytes());
        }
        std::vector<std::uint64_t> want = {k == 0 ? 300 : tag - 1};
        if (tag == 2) want.push_back(0);
        REQUIRE(dep_tags == want);
    }
    REQUIRE(g.op_deps.op_count() == g.ops.size());

    // A tail of one rank is left as it is.
    traces::OpGraph one = graph_of(1);
    for (std::uint32_t k = 0; k < 3; ++k) one.add(tagged(0, k));
    const auto copy = one.ops;
    traces::interleave_ranks(one, 0, scratch);
    REQUIRE(one.ops == copy);
}

TEST_CASE("a rank whose ops are in two places is not interleaved", "[traces][interleave]") {
    traces::OpGraph g = graph_of(2);
    g.add(tagged(0, 0));
    g.add(tagged(1, 0));
    g.add(tagged(0, 1));
    traces::InterleaveScratch scratch;
    REQUIRE_THROWS_AS(traces::interleave_ranks(g, 0, scratch), engine::InternalError);
}
