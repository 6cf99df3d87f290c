// Link counters' rate series (ReplayOptions::link_series): every link that carried traffic keeps its totals, and
// only the busiest links, picked as the Perfetto writer and the report pick theirs, keep their rate over time.
#include <algorithm>
#include <limits>
#include <numeric>

#include <catch2/catch.hpp>

#include "tests/sim/replay_fixture.h"

using namespace clustersim;

TEST_CASE("only the links that carried the most bytes keep their rate series, the same as with all kept",
          "[sim][network]") {
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    testing::GraphBuilder b(16);
    std::vector<std::uint32_t> members(16);
    std::iota(members.begin(), members.end(), 0U);
    // An all-reduce over both nodes (many links with equal bytes: ties), and a transfer that makes a few busier.
    for (std::uint32_t r = 0; r < 16; ++r)
        b.collective(r, "ar", "world", members, 48 << 20, traces::CollectiveKind::all_reduce);
    b.p2p(traces::OpKind::send, 0, 9, "s", 16 << 20);
    b.p2p(traces::OpKind::recv, 9, 0, "r", 16 << 20);
    auto options = testing::exact_options();
    options.link_series = std::numeric_limits<std::size_t>::max();
    const auto all = sim::replay(b.g, cluster, options);
    const auto& every = all.timeline.counters;
    REQUIRE(every.size() > 20);
    for (const std::size_t kept : {std::size_t{0}, std::size_t{1}, std::size_t{7}, every.size()}) {
        options.link_series = kept;
        const auto some = sim::replay(b.g, cluster, options);
        const auto& counters = some.timeline.counters;
        REQUIRE(counters.size() == every.size());
        // The busiest `kept`, by bytes, ties by order: what PerfettoOptions::max_link_counters selects.
        std::vector<std::size_t> order(every.size());
        std::iota(order.begin(), order.end(), 0U);
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t x, std::size_t y) { return every[x].bytes > every[y].bytes; });
        order.resize(kept);
        std::size_t with_series = 0;
        for (std::size_t c = 0; c < every.size(); ++c) {
            INFO("kept " << kept << ", counter " << c << " " << every[c].name);
            REQUIRE(counters[c].name == every[c].name);
            REQUIRE(counters[c].bytes == every[c].bytes);
            REQUIRE(counters[c].peak == every[c].peak);
            REQUIRE(counters[c].contention_delay_s == every[c].contention_delay_s);
            REQUIRE(counters[c].bin_width == every[c].bin_width);
            const bool busiest = std::find(order.begin(), order.end(), c) != order.end();
            REQUIRE(!every[c].points.empty());
            if (busiest) {
                REQUIRE(counters[c].points == every[c].points);
                REQUIRE(counters[c].bins == every[c].bins);
                ++with_series;
            } else {
                REQUIRE(counters[c].points.empty());
                REQUIRE(counters[c].bins.empty());
            }
        }
        REQUIRE(with_series == kept);
    }
}
