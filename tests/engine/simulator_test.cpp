// Simulator: the run loop's order, bounds and cancellation.
#include <vector>

#include <catch2/catch.hpp>

#include "engine/simulator.h"

using namespace clustersim::engine;
using namespace std::chrono_literals;

namespace {
struct Recorder {
    Simulator* sim;
    std::vector<std::pair<std::int64_t, std::uint32_t>> fired;
    void operator()(const Event& e) { fired.emplace_back(sim->now().count(), e.target); }
};
}  // namespace

TEST_CASE("events run in time order and the clock follows them", "[engine][simulator]") {
    Simulator sim;
    Recorder rec{&sim, {}};
    sim.schedule_at(Time{30}, 0, 3);
    sim.schedule_at(Time{10}, 0, 1);
    sim.schedule_at(Time{20}, 0, 2);
    sim.schedule_at(Time{10}, 0, 4);  // same time as target 1, scheduled later: runs after it
    REQUIRE(sim.run(rec) == StopReason::queue_empty);
    REQUIRE(rec.fired == std::vector<std::pair<std::int64_t, std::uint32_t>>{{10, 1}, {10, 4}, {20, 2}, {30, 3}});
    REQUIRE(sim.events_processed() == 4);
    REQUIRE(sim.now() == Time{30});
}

TEST_CASE("run_until stops exactly at the bound and leaves later events queued", "[engine][simulator]") {
    Simulator sim;
    Recorder rec{&sim, {}};
    sim.schedule_at(1us - Time{1}, 0, 1);
    sim.schedule_at(1us, 0, 2);
    sim.schedule_at(1us + Time{1}, 0, 3);
    REQUIRE(sim.run(rec, RunLimits{1us}) == StopReason::time_limit);
    REQUIRE(rec.fired.size() == 2);  // the event exactly at the bound runs; 1 ps later does not
    REQUIRE(sim.now() == 1us);
    REQUIRE(sim.pending() == 1);
    REQUIRE(sim.run(rec) == StopReason::queue_empty);
    REQUIRE(rec.fired.back() == std::pair<std::int64_t, std::uint32_t>{1'000'001, 3});
}

TEST_CASE("a run bounded by event count stops after that many events", "[engine][simulator]") {
    Simulator sim;
    Recorder rec{&sim, {}};
    for (std::uint32_t i = 0; i < 10; ++i) sim.schedule_at(Time{i}, 0, i);
    REQUIRE(sim.run(rec, RunLimits{max_time, 4}) == StopReason::event_limit);
    REQUIRE(rec.fired.size() == 4);
    REQUIRE(sim.now() == Time{3});
}

TEST_CASE("cancelled and re-armed timers never fire their stale events", "[engine][simulator]") {
    Simulator sim;
    Recorder rec{&sim, {}};
    const TimerId a = sim.make_timer();
    const TimerId b = sim.make_timer();
    sim.arm(a, Time{10}, 0);
    sim.arm(b, Time{20}, 0);
    sim.arm(a, Time{30}, 7);  // supersedes the event at 10
    sim.cancel(b);
    REQUIRE(!sim.armed(b));
    REQUIRE(sim.armed(a));
    sim.run(rec);
    REQUIRE(rec.fired == std::vector<std::pair<std::int64_t, std::uint32_t>>{{30, a}});
    REQUIRE(sim.stale_events_skipped() == 2);
    REQUIRE(sim.events_processed() == 1);
    REQUIRE(!sim.armed(a));
}

TEST_CASE("a handler can schedule at the current time and stop the run", "[engine][simulator]") {
    Simulator sim;
    std::vector<std::uint32_t> order;
    auto handler = [&](const Event& e) {
        order.push_back(e.target);
        if (e.target == 1) sim.schedule_after(Time{0}, 0, 9);  // same instant, after what is already queued
        if (e.target == 9) sim.request_stop();
    };
    sim.schedule_at(Time{5}, 0, 1);
    sim.schedule_at(Time{5}, 0, 2);
    sim.schedule_at(Time{6}, 0, 3);
    REQUIRE(sim.run(handler) == StopReason::stop_requested);
    REQUIRE(order == std::vector<std::uint32_t>{1, 2, 9});
}

TEST_CASE("scheduling in the past is an internal error", "[engine][simulator]") {
    Simulator sim;
    auto handler = [](const Event&) {};
    sim.schedule_at(Time{10}, 0, 0);
    sim.run(handler);
    REQUIRE_THROWS_AS(sim.schedule_at(Time{9}, 0, 0), InternalError);
}
