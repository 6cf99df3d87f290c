// Unit parsing: the number is read as an exact decimal (mantissa and power of ten) so that "1.5 KiB" is exactly
// 1536 bytes and "1.5ms" exactly 1.5e9 ps; only rates, which are real-valued, become doubles.
#include "engine/units.h"

#include <array>
#include <cctype>
#include <cmath>
#include <optional>

#include <fmt/format.h>

namespace clustersim::engine {
namespace {

// 128-bit integers (a GCC/Clang extension) hold mantissa * prefix * 10^k exactly for every accepted input.
__extension__ typedef unsigned __int128 u128;

/// A non-negative decimal number: mantissa * 10^exponent, with the text that followed it.
struct Decimal {
    u128 mantissa = 0;
    int exponent = 0;
    std::string_view rest;
};

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

[[noreturn]] void reject(std::string_view text, const SourceLocation& where, std::string_view expected,
                         std::string_view why = {}) {
    std::string message = fmt::format("expected {}, got \"{}\"", expected, text);
    if (!why.empty()) message += fmt::format(" ({})", why);
    throw InputError(where, message);
}

/// Reads "12", "1.5", ".5", "2e3", "1.25E-3" at the start of `s`. nullopt when there is no number there.
std::optional<Decimal> read_decimal(std::string_view s, bool& negative, bool& too_large) {
    negative = false;
    too_large = false;
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    Decimal d;
    bool any_digit = false;
    int significant = 0;
    auto take_digit = [&](char c, bool after_point) {
        any_digit = true;
        if (d.mantissa == 0 && c == '0') {
            if (after_point) --d.exponent;
            return;
        }
        if (significant < 36) {
            d.mantissa = d.mantissa * 10 + static_cast<unsigned>(c - '0');
            ++significant;
            if (after_point) --d.exponent;
        } else if (!after_point) {
            ++d.exponent;  // digits beyond 36 significant ones only scale the value
        }
    };
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) take_digit(s[i++], false);
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) take_digit(s[i++], true);
    }
    if (!any_digit) return std::nullopt;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        std::size_t j = i + 1;
        bool exp_negative = false;
        if (j < s.size() && (s[j] == '+' || s[j] == '-')) exp_negative = s[j++] == '-';
        if (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
            long e = 0;
            while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
                e = std::min<long>(e * 10 + (s[j++] - '0'), 100000);
            }
            d.exponent += static_cast<int>(exp_negative ? -e : e);
            i = j;
        }
    }
    if (d.mantissa != 0 && d.exponent + significant > 40) too_large = true;
    d.rest = trim(s.substr(i));
    return d;
}

/// The decimal times `factor`, divided by `divisor`, rounded to nearest; nullopt when it exceeds `limit`.
std::optional<std::uint64_t> scaled(const Decimal& d, u128 factor, u128 divisor, std::uint64_t limit, bool& exact) {
    u128 num = d.mantissa * factor;
    u128 den = divisor;
    const u128 cap = static_cast<u128>(1) << 120;
    if (d.mantissa != 0 && num / d.mantissa != factor) return std::nullopt;
    for (int e = d.exponent; e > 0; --e) {
        if (num > cap / 10) return std::nullopt;
        num *= 10;
    }
    for (int e = d.exponent; e < 0; ++e) {
        if (den > cap / 10) {
            exact = num == 0;
            return 0;  // far below one unit
        }
        den *= 10;
    }
    const u128 q = num / den;
    const u128 r = num % den;
    exact = r == 0;
    const u128 rounded = q + (2 * r >= den ? 1 : 0);
    if (rounded > limit) return std::nullopt;
    return static_cast<std::uint64_t>(rounded);
}

struct Prefix {
    std::string_view text;
    u128 factor;
};

/// Splits "GiB" into its multiplier and what follows ("B"). An empty prefix has factor 1.
Prefix split_prefix(std::string_view& unit) {
    constexpr u128 k = 1000, ki = 1024;
    static const std::array<Prefix, 12> prefixes = {{
        {"Ki", ki},
        {"Mi", ki * ki},
        {"Gi", ki * ki * ki},
        {"Ti", ki * ki * ki * ki},
        {"Pi", ki * ki * ki * ki * ki},
        {"k", k},
        {"K", k},
        {"M", k * k},
        {"G", k * k * k},
        {"T", k * k * k * k},
        {"P", k * k * k * k * k},
        {"", 1},
    }};
    for (const Prefix& p : prefixes) {
        if (unit.size() > p.text.size() && unit.substr(0, p.text.size()) == p.text) {
            unit.remove_prefix(p.text.size());
            return p;
        }
    }
    return prefixes.back();
}

/// Bytes per unit for "B"/"byte(s)" (1) or "b"/"bit(s)" (1/8, returned as divisor 8). nullopt if neither.
std::optional<unsigned> bits_divisor(std::string_view unit) {
    if (unit == "B" || unit == "byte" || unit == "bytes") return 1;
    if (unit == "b" || unit == "bit" || unit == "bits") return 8;
    return std::nullopt;
}

}  // namespace

Time parse_time(std::string_view text, const SourceLocation& where) {
    constexpr std::string_view expected = "a time like \"2 us\", \"1.5ms\" or \"300 ns\"";
    const std::string_view s = trim(text);
    bool negative = false, too_large = false;
    const auto d = read_decimal(s, negative, too_large);
    if (!d) reject(text, where, expected, "no number");
    if (negative && d->mantissa != 0) reject(text, where, expected, "negative");
    struct TimeUnit {
        std::string_view name;
        std::int64_t ps;
    };
    static constexpr std::array<TimeUnit, 8> units = {{{"ps", 1},
                                                       {"ns", 1'000},
                                                       {"us", 1'000'000},
                                                       {"\xC2\xB5s", 1'000'000},
                                                       {"ms", 1'000'000'000},
                                                       {"s", 1'000'000'000'000},
                                                       {"min", 60'000'000'000'000},
                                                       {"h", 3'600'000'000'000'000}}};
    if (d->rest.empty()) reject(text, where, expected, "missing unit (ps, ns, us, ms, s, min, h)");
    for (const TimeUnit& u : units) {
        if (d->rest != u.name) continue;
        bool exact = false;
        const auto ps = too_large ? std::nullopt : scaled(*d, static_cast<u128>(u.ps), 1, INT64_MAX, exact);
        if (!ps) reject(text, where, expected, "too large: the clock holds about 106 days");
        return Time{static_cast<std::int64_t>(*ps)};
    }
    reject(text, where, expected, fmt::format("unknown unit \"{}\"; known: ps, ns, us, ms, s, min, h", d->rest));
}

std::uint64_t parse_bytes(std::string_view text, const SourceLocation& where) {
    constexpr std::string_view expected = "a size like \"4096\", \"64 MiB\" or \"1 GB\"";
    const std::string_view s = trim(text);
    bool negative = false, too_large = false;
    const auto d = read_decimal(s, negative, too_large);
    if (!d) reject(text, where, expected, "no number");
    if (negative && d->mantissa != 0) reject(text, where, expected, "negative");
    u128 factor = 1;
    unsigned divisor = 1;
    if (!d->rest.empty()) {
        std::string_view unit = d->rest;
        factor = split_prefix(unit).factor;
        const auto div = bits_divisor(unit);
        if (!div) reject(text, where, expected, fmt::format("unknown unit \"{}\"", d->rest));
        divisor = *div;
    }
    bool exact = false;
    // At most 1 PiB: sizes beyond it have no meaning in a simulation, and their times would pass the clock's range.
    const auto bytes = too_large ? std::nullopt : scaled(*d, factor, divisor, std::uint64_t{1} << 50, exact);
    if (!bytes) reject(text, where, expected, "too large: at most 1 PiB");
    if (!exact) reject(text, where, expected, "not a whole number of bytes");
    return *bytes;
}

double parse_rate(std::string_view text, const SourceLocation& where) {
    constexpr std::string_view expected = "a rate like \"400 Gb/s\" or \"900 GB/s\"";
    const std::string_view s = trim(text);
    bool negative = false, too_large = false;
    const auto d = read_decimal(s, negative, too_large);
    if (!d) reject(text, where, expected, "no number");
    if (negative) reject(text, where, expected, "negative");
    if (d->rest.empty()) reject(text, where, expected, "missing unit");
    std::string_view unit = d->rest;
    const Prefix prefix = split_prefix(unit);
    std::optional<unsigned> div;
    if (unit.size() > 2 && unit.substr(unit.size() - 2) == "/s") {
        div = bits_divisor(unit.substr(0, unit.size() - 2));
    } else if (unit == "bps") {
        div = 8;
    } else if (unit == "Bps") {
        div = 1;
    }
    if (!div) reject(text, where, expected, fmt::format("unknown unit \"{}\"", d->rest));
    const double value = static_cast<double>(d->mantissa) * std::pow(10.0, d->exponent) *
                         static_cast<double>(prefix.factor) / static_cast<double>(*div);
    if (too_large || !std::isfinite(value) || value > 1e30) reject(text, where, expected, "too large");
    if (value <= 0) reject(text, where, expected, "must be positive");
    return value;
}

std::string format_bytes(double bytes) {
    static constexpr std::array<const char*, 6> names = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    if (std::fabs(bytes) < 1024) return fmt::format("{} B", static_cast<long long>(std::llround(bytes)));
    std::size_t i = 0;
    double v = bytes;
    while (std::fabs(v) >= 1024 && i + 1 < names.size()) {
        v /= 1024;
        ++i;
    }
    return fmt::format("{:.3f} {}", v, names[i]);
}

std::string format_rate(double bytes_per_s) {
    static constexpr std::array<const char*, 6> names = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s"};
    std::size_t i = 0;
    double v = bytes_per_s;
    while (std::fabs(v) >= 1000 && i + 1 < names.size()) {
        v /= 1000;
        ++i;
    }
    return fmt::format("{:.3f} {}", v, names[i]);
}

}  // namespace clustersim::engine
