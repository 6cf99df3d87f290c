// EventQueue: (time, seq) order, ties in scheduling order, through pushes, pops, moves and removals.
#include <limits>
#include <map>
#include <random>
#include <span>
#include <utility>
#include <vector>

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

namespace {
/// Random pushes, pops, moves and removals at times drawn from `times`, checked against a sorted map of
/// (time, seq) after every step.
void check_against_reference(std::span<const std::int64_t> times, std::uint64_t seed) {
    EventQueue q;
    struct Pending {
        std::int64_t at;
        std::uint64_t seq;
        std::uint32_t slot;  // movable events; UINT32_MAX for plain ones
    };
    std::map<std::pair<std::int64_t, std::uint64_t>, std::uint32_t> reference;  // (time, seq) -> slot
    std::vector<Pending> movable;                                               // pending movable events, in no order
    std::uint64_t next_seq = 0;  // stamped by every push and move, one after the other
    std::mt19937_64 rng(seed);
    std::uint64_t popped = 0, moved = 0, removed = 0;
    for (int step = 0; step < 100'000; ++step) {
        const auto action = rng() % 10;
        const std::int64_t at = times[rng() % times.size()];
        if (reference.empty() || action < 3) {
            REQUIRE(q.push(Time{at}, 1, 0, 0) == next_seq);
            reference.emplace(std::pair(at, next_seq++), UINT32_MAX);
        } else if (action < 5) {
            const std::uint32_t slot = q.push_movable(Time{at}, 2, 0, 0);
            movable.push_back({at, next_seq, slot});
            reference.emplace(std::pair(at, next_seq++), slot);
        } else if (action < 8) {
            const Event e = q.pop();
            const auto first = reference.begin();
            REQUIRE(e.at.count() == first->first.first);
            REQUIRE(e.seq == first->first.second);
            if (first->second != UINT32_MAX) std::erase_if(movable, [&](const Pending& m) { return m.seq == e.seq; });
            reference.erase(first);
            ++popped;
        } else if (!movable.empty()) {
            const std::size_t k = rng() % movable.size();
            Pending& m = movable[k];
            reference.erase(std::pair(m.at, m.seq));
            if (action == 8) {  // moved to another time, with a fresh sequence number
                q.reschedule(m.slot, Time{at}, 2, 0, 0);
                m.at = at;
                m.seq = next_seq++;
                reference.emplace(std::pair(m.at, m.seq), m.slot);
                ++moved;
            } else {
                q.remove(m.slot);
                movable[k] = movable.back();
                movable.pop_back();
                ++removed;
            }
        }
        REQUIRE(q.size() == reference.size());
    }
    while (!q.empty()) {
        const Event e = q.pop();
        REQUIRE(std::pair(e.at.count(), e.seq) == reference.begin()->first);
        reference.erase(reference.begin());
    }
    REQUIRE(reference.empty());
    CHECK(popped > 20'000);
    CHECK(moved > 5'000);
    CHECK(removed > 5'000);
}
}  // namespace

TEST_CASE("pushes, pops, moves and removals at few distinct times follow a sorted reference exactly",
          "[engine][event_queue]") {
    // Keys compare as one 128-bit integer (the time's sign bit flipped): negative times, the ends of the range and
    // many ties must order as (time, sequence) does, through every kind of sift.
    const std::int64_t times[] = {std::numeric_limits<std::int64_t>::min(), -7, -1, 0, 1, 5, 5'000'000,
                                  std::numeric_limits<std::int64_t>::max()};
    check_against_reference(times, 11);
}

TEST_CASE("the same with thousands of distinct times, more than the table of newest buckets holds",
          "[engine][event_queue]") {
    // 3,000 times share the 1,024 entries of the table that finds a time's newest bucket: a time whose entry was
    // taken by another gets a new bucket while an older one of that time is still pending, and each must keep
    // its own run of sequence numbers.
    std::vector<std::int64_t> times(3000);
    for (std::size_t i = 0; i < times.size(); ++i) times[i] = static_cast<std::int64_t>(i * 7919 % 100'003);
    check_against_reference(times, 12);
}
