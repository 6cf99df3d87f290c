// Parsing and printing of quantities with units, as every configuration writes them: times ("2 us"), sizes
// ("64 MiB", "1 GB", "4096") and bandwidths ("900 GB/s", "400 Gb/s", "25 GiB/s"). Decimal prefixes (k, M, G, T, P)
// are powers of 1000, binary ones (Ki, Mi, Gi, Ti, Pi) powers of 1024; "B" is a byte and "b" (or "bit") a bit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/error.h"
#include "engine/time.h"

namespace clustersim::engine {

/// A time: number, optional space, unit in ps, ns, us (or µs), ms, s, min, h. "1.5ms" is 1,500,000,000 ps.
/// Values are rounded to the nearest picosecond. Throws InputError (located at `where`) on bad input.
Time parse_time(std::string_view text, const SourceLocation& where = {});

/// A size in bytes: a bare integer ("4096"), or a number with a unit ("64 MiB", "1 GB", "1.5 KiB", "8 Gb").
/// Must come to a whole number of bytes.
std::uint64_t parse_bytes(std::string_view text, const SourceLocation& where = {});

/// A bandwidth in bytes per second: "900 GB/s", "400 Gb/s" (bits), "25 GiB/s", "100 Gbps". Must be positive.
double parse_rate(std::string_view text, const SourceLocation& where = {});

/// "64.000 MiB"-style human form of a byte count (binary prefixes), exact "512 B" below 1 KiB.
std::string format_bytes(double bytes);
/// A byte count computed in floating point, as a whole number: rounded, negative as 0, beyond 2^63 as 2^63.
constexpr std::uint64_t saturated_bytes(double bytes) {
    if (!(bytes > 0)) return 0;
    if (bytes >= 0x1p63) return std::uint64_t{1} << 63;
    return static_cast<std::uint64_t>(bytes + 0.5);
}

/// "900.000 GB/s"-style human form of a rate in bytes per second (decimal prefixes).
std::string format_rate(double bytes_per_s);

}  // namespace clustersim::engine
