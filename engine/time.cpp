// Conversions of simulated time to and from seconds, and its human-readable form.
#include "engine/time.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "engine/error.h"

namespace clustersim::engine {

Time from_seconds(double seconds) {
    const double ps = std::round(seconds * 1e12);
    CLUSTERSIM_CHECK(std::isfinite(ps) && std::fabs(ps) < 9.2e18, "time of {} s is out of range", seconds);
    return Time{static_cast<std::int64_t>(ps)};
}

Time transfer_time(double bytes, double rate_bytes_per_s) {
    CLUSTERSIM_CHECK(bytes >= 0, "negative transfer of {} bytes", bytes);
    if (bytes == 0) return zero_time;
    CLUSTERSIM_CHECK(rate_bytes_per_s > 0, "transfer of {} bytes at non-positive rate {}", bytes, rate_bytes_per_s);
    // bytes * 1e12 first: for whole bytes and round rates (1e6 B at 50e9 B/s) every step is exact. The factor
    // (1 - 4 eps) keeps floating-point noise of a few ulps above a whole picosecond from adding one more.
    const double exact_ps = bytes * 1e12 / rate_bytes_per_s;
    const double below = exact_ps * (1.0 - 4 * std::numeric_limits<double>::epsilon());
    // (Doubles from 2^53 up are whole, so `below` is under 9.2e18 exactly when its ceiling is; NaN fails too.)
    CLUSTERSIM_CHECK(below < 9.2e18, "transfer of {} bytes at {} B/s overflows the clock", bytes, rate_bytes_per_s);
    // The ceiling by truncation (x >= 0): std::ceil is a library call without SSE4.1, and this runs per flow.
    std::int64_t ps = static_cast<std::int64_t>(below);
    if (static_cast<double>(ps) < below) ++ps;
    return Time{std::max<std::int64_t>(1, ps)};
}

std::string format_time(Time t) {
    const std::int64_t ps = t.count();
    if (ps == 0) return "0 s";
    const std::int64_t mag = ps < 0 ? -ps : ps;
    struct Unit {
        std::int64_t ps;
        const char* name;
    };
    static constexpr Unit units[] = {{1'000'000'000'000, "s"}, {1'000'000'000, "ms"}, {1'000'000, "us"}, {1'000, "ns"}};
    for (const Unit& u : units) {
        if (mag >= u.ps) return fmt::format("{:.3f} {}", static_cast<double>(ps) / static_cast<double>(u.ps), u.name);
    }
    return fmt::format("{} ps", ps);
}

}  // namespace clustersim::engine
