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
    const double ps = std::ceil(exact_ps * (1.0 - 4 * std::numeric_limits<double>::epsilon()));
    CLUSTERSIM_CHECK(ps < 9.2e18, "transfer of {} bytes at {} B/s overflows the clock", bytes, rate_bytes_per_s);
    return Time{std::max<std::int64_t>(1, static_cast<std::int64_t>(ps))};
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
