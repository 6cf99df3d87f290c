// The Perfetto timeline's categories: each op kind in its own, so that host gaps are not shown as copies.
#include <catch2/catch.hpp>

#include "traces/perfetto_writer.h"
#include "traces/timeline.h"

using namespace clustersim;
using Catch::Matchers::Contains;

TEST_CASE("the timeline files host gaps, copies and allocations under their own categories", "[traces][perfetto]") {
    traces::OpGraph g;
    g.rank_count = 1;
    const traces::RankId r{0};
    const auto add = [&](const char* name, traces::OpKind kind) {
        traces::Op op{g.stream(r, "s"), g.intern(name), kind};
        return g.add(op);
    };
    add("launch gap", traces::OpKind::delay);
    add("h2d", traces::OpKind::memcpy_h2d);
    add("buffer", traces::OpKind::alloc);
    add("gemm", traces::OpKind::compute);
    traces::Timeline tl;
    for (int i = 0; i < 4; ++i)
        tl.append(traces::OpTiming{engine::Time{i * 1'000'000}, engine::Time{(i + 1) * 1'000'000}});
    const std::string json = traces::perfetto_json(g, tl, {});
    REQUIRE_THAT(json, Contains("\"name\":\"launch gap\",\"cat\":\"host\""));
    REQUIRE_THAT(json, Contains("\"name\":\"h2d\",\"cat\":\"copy\""));
    REQUIRE_THAT(json, Contains("\"name\":\"buffer\",\"cat\":\"memory\""));
    REQUIRE_THAT(json, Contains("\"name\":\"gemm\",\"cat\":\"compute\""));
}
