// A fast path of the replay against its reference on one graph: the same times to the picosecond, the same records
// and counts, the same link counters (closed forms, repeated calls).
#pragma once

#include <catch2/catch.hpp>

#include "sim/replay/replay.h"

namespace clustersim::testing {

inline void require_same_replay(const sim::ReplayResult& fast, const sim::ReplayResult& reference) {
    REQUIRE(fast.timeline.makespan == reference.timeline.makespan);
    REQUIRE(fast.timeline.ends == reference.timeline.ends);
    REQUIRE(fast.timeline.starts == reference.timeline.starts);
    REQUIRE(fast.timeline.critical_preds == reference.timeline.critical_preds);
    REQUIRE(fast.timeline.contentions == reference.timeline.contentions);
    REQUIRE(fast.timeline.waits == reference.timeline.waits);
    REQUIRE(fast.flows == reference.flows);
    REQUIRE(fast.bytes_on_network == reference.bytes_on_network);
    REQUIRE(fast.timeline.transfers == reference.timeline.transfers);
    REQUIRE(fast.collectives.size() == reference.collectives.size());
    for (std::size_t c = 0; c < reference.collectives.size(); ++c) {
        REQUIRE(fast.collectives[c].first_arrival == reference.collectives[c].first_arrival);
        REQUIRE(fast.collectives[c].last_arrival == reference.collectives[c].last_arrival);
        REQUIRE(fast.collectives[c].end == reference.collectives[c].end);
    }
    // What each link carried: the same links, peaks and contention delays (integer sums); bytes and the busiest
    // links' bins to rounding (sums taken in another order: a closed form's spans, a repeat's steps given at once).
    REQUIRE(fast.timeline.counters.size() == reference.timeline.counters.size());
    for (std::size_t k = 0; k < reference.timeline.counters.size(); ++k) {
        const auto& a = fast.timeline.counters[k];
        const auto& b = reference.timeline.counters[k];
        REQUIRE(a.name == b.name);
        REQUIRE(a.bytes == Approx(b.bytes).epsilon(1e-12));
        REQUIRE(a.peak == b.peak);
        REQUIRE(a.contention_delay_s == b.contention_delay_s);
        REQUIRE(a.bin_width == b.bin_width);
        REQUIRE(a.bins.size() == b.bins.size());
        for (std::size_t i = 0; i < a.bins.size(); ++i) REQUIRE(a.bins[i] == Approx(b.bins[i]).epsilon(1e-12));
    }
}

}  // namespace clustersim::testing
