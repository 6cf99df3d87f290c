// Time: exact conversions, rounding of transfers, printing.
#include <catch2/catch.hpp>

#include "engine/time.h"

using namespace clustersim::engine;
using namespace std::chrono_literals;

TEST_CASE("chrono literals convert to picoseconds exactly", "[engine][time]") {
    REQUIRE(Time(1us).count() == 1'000'000);
    REQUIRE(Time(3ms).count() == 3'000'000'000);
    REQUIRE(from_seconds(1.5e-6) == Time{1'500'000});
}

TEST_CASE("transfer_time rounds up to the next picosecond", "[engine][time]") {
    // 1 byte at 900 GB/s = 1.111... ps -> 2 ps; 9e11 bytes at 9e11 B/s = exactly 1 s.
    REQUIRE(transfer_time(1, 900e9) == Time{2});
    REQUIRE(transfer_time(900e9, 900e9) == Time{1'000'000'000'000});
    REQUIRE(transfer_time(0, 1) == Time{0});
    REQUIRE(transfer_time(1e6, 50e9) == 20us);
}

TEST_CASE("times print with an adaptive unit", "[engine][time]") {
    REQUIRE(format_time(Time{1'250'000}) == "1.250 us");
    REQUIRE(format_time(Time{0}) == "0 s");
    REQUIRE(format_time(Time{999}) == "999 ps");
    REQUIRE(format_time(12ms) == "12.000 ms");
    REQUIRE(format_time(Time{2'500'000'000'000}) == "2.500 s");
}
