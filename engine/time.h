// Simulated time: integer picoseconds in a std::chrono duration, plus the one place that turns a rate into a
// duration. Picoseconds because one byte on a 900 GB/s link takes about 1.1 ps; integers so that ties and
// comparisons are exact and identical on every machine.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace clustersim::engine {

/// Simulated time or duration in integer picoseconds (about 106 days of range).
using Time = std::chrono::duration<std::int64_t, std::pico>;

inline constexpr Time zero_time{0};
inline constexpr Time max_time{INT64_MAX};

/// Picoseconds as a plain integer, for arithmetic and output.
constexpr std::int64_t to_ps(Time t) { return t.count(); }

/// Seconds as a double: for output and for rate arithmetic only, never for ordering.
constexpr double to_seconds(Time t) { return static_cast<double>(t.count()) * 1e-12; }

/// The time nearest to `seconds` (rounded half away from zero); throws InternalError when out of range.
Time from_seconds(double seconds);

/// Time to move `bytes` at `rate_bytes_per_s`, rounded up to the next picosecond so a non-empty transfer never
/// takes zero time. Checks that the rate is positive and the result fits.
Time transfer_time(double bytes, double rate_bytes_per_s);

/// Human form with an adaptive unit and three decimals: "1.250 us", "12.000 ms", "0 s" for zero.
std::string format_time(Time t);

}  // namespace clustersim::engine
