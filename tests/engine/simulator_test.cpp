// Simulator: the run loop's order, bounds and cancellation.
#include <random>
#include <set>
#include <tuple>
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

TEST_CASE("cancelled and re-armed timers never fire their old events, and leave none queued", "[engine][simulator]") {
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
    REQUIRE(sim.pending() == 1);  // moved and removed in place, not left stale
    sim.run(rec);
    REQUIRE(rec.fired == std::vector<std::pair<std::int64_t, std::uint32_t>>{{30, a}});
    REQUIRE(sim.pending() == 0);
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

TEST_CASE("timers moved in place fire in the order lazily deleted ones did", "[engine][simulator]") {
    // Reference: every arm pushes (time, sequence) and an event fires only if it is its timer's latest arm.
    std::mt19937_64 rng(42);
    Simulator sim;
    std::vector<TimerId> timers;
    for (int i = 0; i < 64; ++i) timers.push_back(sim.make_timer());
    std::set<std::tuple<std::int64_t, std::uint64_t, std::uint32_t>> reference;  // (at, seq, timer)
    std::vector<std::uint64_t> latest(timers.size(), UINT64_MAX);
    std::uint64_t seq = 0;
    std::vector<std::uint32_t> fired, expected;
    auto arm = [&](std::uint32_t t, std::int64_t at) {
        sim.arm(timers[t], Time{at}, 0);
        reference.emplace(at, seq, t);
        latest[t] = seq++;
    };
    auto handler = [&](const Event& e) {
        fired.push_back(e.target);
        // Handlers re-arm and cancel others, as flows do when rates change.
        for (int k = 0; k < 3; ++k) {
            const auto t = static_cast<std::uint32_t>(rng() % timers.size());
            if (rng() % 4 == 0) {
                sim.cancel(timers[t]);
                latest[t] = UINT64_MAX;
            } else {
                arm(t, sim.now().count() + static_cast<std::int64_t>(rng() % 50));
            }
        }
    };
    for (std::uint32_t t = 0; t < timers.size(); ++t) arm(t, static_cast<std::int64_t>(rng() % 100));
    sim.run(handler, RunLimits{Time{5'000}, UINT64_MAX});
    // Replay the reference with the same random choices.
    reference.clear();
    std::fill(latest.begin(), latest.end(), UINT64_MAX);
    seq = 0;
    std::mt19937_64 again(42);
    for (std::uint32_t t = 0; t < timers.size(); ++t) {
        reference.emplace(static_cast<std::int64_t>(again() % 100), seq, t);
        latest[t] = seq++;
    }
    while (!reference.empty()) {
        const auto [at, s, t] = *reference.begin();
        reference.erase(reference.begin());
        if (at > 5'000) break;
        if (latest[t] != s) continue;
        latest[t] = UINT64_MAX;
        expected.push_back(t);
        for (int k = 0; k < 3; ++k) {
            const auto u = static_cast<std::uint32_t>(again() % timers.size());
            if (again() % 4 == 0) {
                latest[u] = UINT64_MAX;
            } else {
                reference.emplace(at + static_cast<std::int64_t>(again() % 50), seq, u);
                latest[u] = seq++;
            }
        }
    }
    REQUIRE(fired.size() > 1000);
    REQUIRE(fired == expected);
    REQUIRE(sim.pending() <= timers.size());  // at most one event per timer: none left stale
}

TEST_CASE("a handler sees the event the next pop returns, through buckets and moved timers", "[engine][simulator]") {
    // Events at a few times (buckets), timers re-armed while pending: at each event, next_event names the target
    // and kind of the event that runs next, and says none after the last.
    Simulator sim;
    std::mt19937_64 rng(5);
    std::vector<TimerId> timers;
    for (int k = 0; k < 20; ++k) timers.push_back(sim.make_timer());
    for (std::uint32_t i = 0; i < 300; ++i)
        sim.schedule_at(Time{static_cast<std::int64_t>(rng() % 7)}, static_cast<std::uint16_t>(i % 3), i);
    for (const TimerId t : timers) sim.arm(t, Time{static_cast<std::int64_t>(rng() % 7)}, 9);
    bool expected = false;
    std::uint32_t next_target = 0;
    std::uint16_t next_kind = 0;
    std::uint64_t checked = 0;
    auto handler = [&](const Event& e) {
        if (expected) {
            REQUIRE(e.target == next_target);
            REQUIRE(e.kind == next_kind);
            ++checked;
        }
        if (e.kind != 9 && rng() % 4 == 0)  // move a pending timer: the next event may change
            sim.arm(timers[rng() % timers.size()], sim.now() + Time{static_cast<std::int64_t>(rng() % 3)}, 9);
        expected = sim.next_event(next_target, next_kind);
    };
    REQUIRE(sim.run(handler) == StopReason::queue_empty);
    REQUIRE_FALSE(expected);
    REQUIRE(checked == sim.events_processed() - 1);
}
