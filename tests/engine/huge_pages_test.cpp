// Arrays on huge pages: the advice never changes what a vector holds.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "engine/huge_pages.h"

using namespace clustersim;

TEST_CASE("arrays reserved or assigned on huge pages hold what plain vectors would", "[engine][memory]") {
    std::vector<std::uint32_t> v;
    engine::reserve_huge(v, 3'000'000);  // 12 MB: whole 2 MiB pages inside
    CHECK(v.empty());
    CHECK(v.capacity() >= 3'000'000);
    engine::assign_huge(v, 3'000'000, std::uint32_t{7});
    REQUIRE(v.size() == 3'000'000);
    CHECK(v.front() == 7);
    CHECK(v.back() == 7);
    // Smaller again (kept capacity), then larger (a new array), then small (no advice at all).
    engine::assign_huge(v, 5, std::uint32_t{1});
    CHECK(v == std::vector<std::uint32_t>(5, 1));
    engine::assign_huge(v, 4'000'000, std::uint32_t{2});
    CHECK(v.size() == 4'000'000);
    CHECK(v[3'999'999] == 2);
    std::vector<std::uint8_t> small;
    engine::assign_huge(small, 10, std::uint8_t{3});
    CHECK(small == std::vector<std::uint8_t>(10, 3));
    engine::advise_huge_pages(nullptr, 1 << 30);  // nothing to advise: no effect
}
