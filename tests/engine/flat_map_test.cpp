// FlatMap64 behaves as a map under random inserts, updates and erases (backward-shift deletion keeps every key
// reachable, across growth and wrap-around of probe runs).
#include <map>
#include <random>

#include <catch2/catch.hpp>

#include "engine/flat_map.h"

using namespace clustersim;

TEST_CASE("a flat map agrees with std::map under random inserts and erases", "[engine][flat_map]") {
    engine::FlatMap64<std::uint64_t> map;
    std::map<std::uint64_t, std::uint64_t> reference;
    std::mt19937_64 rng(3);
    for (int i = 0; i < 200'000; ++i) {
        // Few distinct keys, so that probe runs collide, grow and shrink; some keys far apart.
        const std::uint64_t key = rng() % 4 == 0 ? rng() % 1'000'000'007 : rng() % 700;
        switch (rng() % 3) {
            case 0: {
                bool inserted = false;
                std::uint64_t& value = map.find_or_insert(key, inserted);
                REQUIRE(inserted == (reference.count(key) == 0));
                REQUIRE(value == (inserted ? 0 : reference[key]));
                value = rng();
                reference[key] = value;
                break;
            }
            case 1:
                map.erase(key);
                reference.erase(key);
                break;
            default: {
                const std::uint64_t* found = map.find(key);
                REQUIRE((found != nullptr) == (reference.count(key) == 1));
                if (found) REQUIRE(*found == reference[key]);
            }
        }
        REQUIRE(map.size() == reference.size());
    }
    for (const auto& [key, value] : reference) REQUIRE(*map.find(key) == value);
    map.clear();
    REQUIRE(map.find(1) == nullptr);
    REQUIRE(map.size() == 0);
}
