// BitRank: membership and the count of members below an id, against a plain list, on random sets of every density
// and at the edges of its words and blocks.
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "engine/bit_rank.h"

using clustersim::engine::BitRank;

TEST_CASE("a bit rank's members and counts below are a plain list's", "[engine]") {
    std::mt19937_64 rng(5);
    for (const std::size_t n : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{65}, std::size_t{511},
                                std::size_t{512}, std::size_t{513}, std::size_t{5000}}) {
        for (const unsigned one_in : {1U, 2U, 7U, 100U}) {
            std::vector<bool> in(n);
            BitRank set;
            set.reset(n);
            for (std::size_t i = 0; i < n; ++i) {
                in[i] = rng() % one_in == 0;
                if (in[i]) set.insert(i);
            }
            set.finish();
            std::uint32_t below = 0;
            for (std::size_t i = 0; i < n; ++i) {
                INFO("n " << n << ", one in " << one_in << ", id " << i);
                REQUIRE(set.contains(i) == in[i]);
                REQUIRE(set.rank(i) == below);
                below += in[i];
            }
            REQUIRE(set.size() == below);
        }
    }
    // Reset to a smaller set: nothing of the last one is left.
    BitRank set;
    set.reset(700);
    set.insert(699);
    set.finish();
    set.reset(10);
    set.finish();
    REQUIRE(set.size() == 0);
    REQUIRE(!set.contains(9));
}

TEST_CASE("a bit rank built id by id counts as one built at once, and truncates", "[engine]") {
    std::mt19937_64 rng(11);
    for (const unsigned one_in : {1U, 3U, 100U}) {
        const std::size_t n = 1500;
        std::vector<bool> in(n);
        BitRank appended, at_once;
        at_once.reset(n);
        for (std::size_t i = 0; i < n; ++i) {
            in[i] = rng() % one_in == 0;
            appended.push_back(in[i]);
            if (in[i]) at_once.insert(i);
        }
        at_once.finish();
        REQUIRE(appended == at_once);
        REQUIRE(appended.ids() == n);
        REQUIRE(appended.size() == at_once.size());
        for (std::size_t i = 0; i < n; ++i) {
            INFO("one in " << one_in << ", id " << i);
            REQUIRE(appended.contains(i) == in[i]);
            REQUIRE(appended.rank(i) == at_once.rank(i));
        }
        // Truncated at word and block edges and between them, then appended to again: as if built so.
        for (const std::size_t keep : {std::size_t{1300}, std::size_t{1024}, std::size_t{512}, std::size_t{511},
                                       std::size_t{64}, std::size_t{3}, std::size_t{0}}) {
            INFO("one in " << one_in << ", kept " << keep);
            BitRank cut = appended;
            cut.truncate(keep);
            BitRank fresh;
            for (std::size_t i = 0; i < keep; ++i) fresh.push_back(in[i]);
            REQUIRE(cut == fresh);
            REQUIRE(cut.size() == fresh.size());
            for (std::size_t i = keep; i < n; ++i) {
                cut.push_back(!in[i]);
                fresh.push_back(!in[i]);
            }
            REQUIRE(cut == fresh);
            REQUIRE(cut.size() == fresh.size());
            for (std::size_t i = 0; i < n; ++i) REQUIRE(cut.rank(i) == fresh.rank(i));
        }
    }
}
