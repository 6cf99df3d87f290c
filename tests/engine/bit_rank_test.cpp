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
