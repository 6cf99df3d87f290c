// EventQueue: (time, seq) order, ties in scheduling order.
#include <random>

#include <catch2/catch.hpp>

#include "engine/event_queue.h"

using namespace clustersim::engine;

TEST_CASE("10,000 events at one time pop in scheduling order", "[engine][event_queue]") {
    EventQueue q;
    for (std::uint32_t i = 0; i < 10'000; ++i) q.push(Time{5}, 0, i, 0);
    for (std::uint32_t i = 0; i < 10'000; ++i) {
        const Event e = q.pop();
        REQUIRE(e.target == i);
        REQUIRE(e.seq == i);
    }
    REQUIRE(q.empty());
}

TEST_CASE("interleaved times pop sorted, ties by scheduling order", "[engine][event_queue]") {
    EventQueue q;
    std::mt19937_64 rng(7);
    for (std::uint32_t i = 0; i < 5'000; ++i) q.push(Time{static_cast<std::int64_t>(rng() % 100)}, 3, i, 0);
    Event previous = q.pop();
    while (!q.empty()) {
        const Event e = q.pop();
        REQUIRE((e.at > previous.at || (e.at == previous.at && e.seq > previous.seq)));
        REQUIRE(e.kind == 3);
        REQUIRE(e.seq == e.target);  // payload travelled with its key
        previous = e;
    }
}
