// Unit parsing: exact values for good inputs (decimal vs binary prefixes, bits vs bytes) and messages for bad ones.
#include <catch2/catch.hpp>

#include "engine/units.h"

using namespace clustersim::engine;
using Catch::Matchers::Contains;

TEST_CASE("times parse to exact picoseconds", "[engine][units]") {
    REQUIRE(parse_time("2 us") == Time{2'000'000});
    REQUIRE(parse_time("1.5ms") == Time{1'500'000'000});
    REQUIRE(parse_time("300ns") == Time{300'000});
    REQUIRE(parse_time("936.25 ns") == Time{936'250});
    REQUIRE(parse_time("1 s") == Time{1'000'000'000'000});
    REQUIRE(parse_time("2e-6 s") == Time{2'000'000});
    REQUIRE(parse_time("  7 ps ") == Time{7});
    REQUIRE(parse_time("0.0004 ps") == Time{0});  // below the clock's resolution rounds to nearest
    REQUIRE(parse_time("3 \xC2\xB5"
                       "s") == Time{3'000'000});
}

TEST_CASE("sizes parse with decimal and binary prefixes", "[engine][units]") {
    REQUIRE(parse_bytes("4096") == 4096);
    REQUIRE(parse_bytes("64 MiB") == 64ULL << 20);
    REQUIRE(parse_bytes("1 GB") == 1'000'000'000ULL);
    REQUIRE(parse_bytes("1 KB") == 1000);
    REQUIRE(parse_bytes("1 kB") == 1000);
    REQUIRE(parse_bytes("1 KiB") == 1024);
    REQUIRE(parse_bytes("1.5 KiB") == 1536);
    REQUIRE(parse_bytes("8 Gb") == 1'000'000'000ULL);
    REQUIRE(parse_bytes("16 GiB") == 16ULL << 30);
    REQUIRE(parse_bytes("1 TiB") == 1ULL << 40);
    REQUIRE(parse_bytes("8B") == 8);
}

TEST_CASE("rates parse in bytes per second, bits divided by eight", "[engine][units]") {
    REQUIRE(parse_rate("900 GB/s") == 900e9);
    REQUIRE(parse_rate("400 Gb/s") == 50e9);
    REQUIRE(parse_rate("25 GiB/s") == 25.0 * (1ULL << 30));
    REQUIRE(parse_rate("100 Gbps") == 12.5e9);
    REQUIRE(parse_rate("12.5 GB/s") == 12.5e9);
    REQUIRE(parse_rate("1 B/s") == 1.0);
}

TEST_CASE("bad unit strings are rejected, quoting the input and saying what was expected", "[engine][units]") {
    REQUIRE_THROWS_WITH(parse_time(""), Contains("expected a time like") && Contains("got \"\""));
    REQUIRE_THROWS_WITH(parse_time("10 parsecs"),
                        Contains("got \"10 parsecs\"") && Contains("unknown unit \"parsecs\""));
    REQUIRE_THROWS_WITH(parse_time("1e400 s"), Contains("got \"1e400 s\"") && Contains("too large"));
    REQUIRE_THROWS_WITH(parse_time("5"), Contains("missing unit"));
    REQUIRE_THROWS_WITH(parse_time("-1 us"), Contains("negative"));
    REQUIRE_THROWS_WITH(parse_rate("-1 GB/s"),
                        Contains("expected a rate like") && Contains("got \"-1 GB/s\"") && Contains("negative"));
    REQUIRE_THROWS_WITH(parse_rate("GB/s"), Contains("got \"GB/s\"") && Contains("no number"));
    REQUIRE_THROWS_WITH(parse_rate("400"), Contains("missing unit"));
    REQUIRE_THROWS_WITH(parse_rate("0 GB/s"), Contains("must be positive"));
    REQUIRE_THROWS_WITH(parse_rate("400 GB"), Contains("unknown unit \"GB\""));
    REQUIRE_THROWS_WITH(parse_bytes("1.5 B"), Contains("not a whole number of bytes"));
    REQUIRE_THROWS_WITH(parse_bytes("64 MiBs"), Contains("unknown unit \"MiBs\""));
    REQUIRE_THROWS_WITH(parse_bytes("99999999 PiB"), Contains("too large"));
    REQUIRE_THROWS_WITH(parse_bytes("9223372036854775808B"), Contains("too large: at most 1 PiB"));
    REQUIRE(parse_bytes("1 PiB") == std::uint64_t{1} << 50);
    REQUIRE_THROWS_WITH(parse_bytes(""), Contains("expected a size like"));
}

TEST_CASE("a unit error carries the location it was given", "[engine][units]") {
    const SourceLocation where{"topo.yaml", 4, 16, "links[0].bandwidth"};
    REQUIRE_THROWS_WITH(parse_rate("400", where), Contains("topo.yaml:4:16: links[0].bandwidth: expected a rate"));
}

TEST_CASE("quantities print in human units", "[engine][units]") {
    REQUIRE(format_bytes(512) == "512 B");
    REQUIRE(format_bytes(64.0 * (1 << 20)) == "64.000 MiB");
    REQUIRE(format_rate(900e9) == "900.000 GB/s");
}
