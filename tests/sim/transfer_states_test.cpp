// The scheduled transfers' state store behaves as a map keyed by (slot, step), whether a record sits in its
// slot's window or overflows (steps of one slot far apart, as behind a late member).
#include <map>
#include <random>

#include <catch2/catch.hpp>

#include "sim/replay/transfer_states.h"

using namespace clustersim;

TEST_CASE("transfer states keep every (slot, step) record, in the window or beyond it", "[sim][replay]") {
    sim::TransferStates states;
    states.reset(6);
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> reference;
    std::mt19937_64 rng(5);
    std::size_t most_overflowing = 0;
    for (int i = 0; i < 100'000; ++i) {
        const auto slot = static_cast<std::uint32_t>(rng() % 6);
        // Mostly nearby steps (the window), sometimes far ones that share a cell with them (the overflow).
        const auto step = static_cast<std::uint32_t>(rng() % 3 == 0 ? rng() % 64 : rng() % 6);
        const auto key = std::pair{slot, step};
        if (rng() % 2 == 0) {
            bool inserted = false;
            sim::TransferState& state = states.find_or_insert(slot, step, inserted);
            REQUIRE(inserted == (reference.count(key) == 0));
            if (!inserted) REQUIRE(state.pending == reference[key]);
            state.pending = static_cast<std::uint32_t>(rng());
            reference[key] = state.pending;
        } else if (reference.count(key) == 1) {
            REQUIRE(states.find(slot, step)->pending == reference[key]);
            states.erase(slot, step);
            reference.erase(key);
        } else {
            REQUIRE(states.find(slot, step) == nullptr);
        }
        REQUIRE(states.size() == reference.size());
        most_overflowing = std::max(most_overflowing, states.overflowing());
    }
    REQUIRE(most_overflowing > 0);
    for (const auto& [key, pending] : reference) REQUIRE(states.find(key.first, key.second)->pending == pending);
}
