#include "sim/network/link_utilization.h"

#include <catch2/catch.hpp>

using namespace clustersim;
using namespace std::chrono_literals;
using engine::Time;

TEST_CASE("link utilization keeps exact totals and bins that widen as the run grows", "[sim][network]") {
    sim::LinkUtilization used(2, 4);
    // Link 0: 2 GB/s over [0, 1 us), idle, 1 GB/s over [5 us, 6 us). Link 1 never carries anything.
    used.set_rate(0, Time{0}, 2e9);
    used.set_rate(0, 1us, 0);
    REQUIRE(used.bin_width() == Time{256'000});  // 1 ns doubled until 4 bins cover 1 us
    used.set_rate(0, 5us, 5e8);
    used.set_rate(0, 5us, 1e9);  // the last change of an instant holds
    used.set_rate(0, 6us, 0);
    REQUIRE(used.bin_width() == Time{2'048'000});  // 4 bins cover 6 us
    CHECK(used.bytes(0) == Approx(3000).epsilon(1e-12));
    CHECK(used.peak_rate(0) == 2e9);
    CHECK(used.rate(0) == 0);
    CHECK_FALSE(used.carried(1));
    // Bins: [0, 2.048 us) 2000 bytes, [2.048, 4.096 us) none, [4.096, 6.144 us) 1000 bytes.
    const auto bins = used.bins(0);
    REQUIRE(bins.size() == 3);
    CHECK(bins[0] == Approx(2000).epsilon(1e-12));
    CHECK(bins[1] == 0);
    CHECK(bins[2] == Approx(1000).epsilon(1e-12));
    // As a counter track: each bin's average rate, then 0 after the last.
    const auto steps = used.binned_steps(0);
    REQUIRE(steps.size() == 4);
    CHECK(steps[0].first == Time{0});
    CHECK(steps[0].second == Approx(2000 / 2.048e-6).epsilon(1e-12));
    CHECK(steps[1] == std::pair{Time{2'048'000}, 0.0});
    CHECK(steps[2].first == Time{4'096'000});
    CHECK(steps[3] == std::pair{Time{6'144'000}, 0.0});
}

TEST_CASE("a span over several bins is split by their overlaps", "[sim][network]") {
    sim::LinkUtilization used(1, 4);
    used.set_rate(0, Time{0}, 1e9);
    used.set_rate(0, 10us, 0);
    // 10 us in at most 4 bins: 4.096 us wide; 4096, 4096 and 1808 bytes.
    REQUIRE(used.bin_width() == Time{4'096'000});
    const auto bins = used.bins(0);
    REQUIRE(bins.size() == 3);
    CHECK(bins[0] == Approx(4096).epsilon(1e-12));
    CHECK(bins[1] == Approx(4096).epsilon(1e-12));
    CHECK(bins[2] == Approx(1808).epsilon(1e-12));
    CHECK(used.bytes(0) == Approx(10'000).epsilon(1e-12));
}
