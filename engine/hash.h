// Fixed, portable hashes for deterministic choices (ECMP, seeds derived from names). Never std::hash, whose
// values differ between standard libraries.
#pragma once

#include <cstdint>
#include <string_view>

namespace clustersim::engine {

/// splitmix64 finalizer: a well-mixed 64-bit function of `x`.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/// Combines a running hash with one more value.
constexpr std::uint64_t hash_combine(std::uint64_t seed, std::uint64_t value) {
    return splitmix64(seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)));
}

/// FNV-1a over the bytes of `text`.
constexpr std::uint64_t fnv1a(std::string_view text) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return h;
}

}  // namespace clustersim::engine
