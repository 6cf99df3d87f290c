// Strong integer ids: a DeviceId can't be passed where a LinkId is expected. Each indexes a flat vector.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace clustersim::engine {

/// A 32-bit id tagged with the kind of thing it names. `invalid()` marks "none".
template <class Tag>
struct StrongId {
    std::uint32_t value = std::numeric_limits<std::uint32_t>::max();

    constexpr StrongId() = default;
    constexpr explicit StrongId(std::uint32_t v) : value(v) {}
    template <class Integer>
    static constexpr StrongId from_index(Integer i) {
        return StrongId{static_cast<std::uint32_t>(i)};
    }
    static constexpr StrongId invalid() { return StrongId{}; }
    [[nodiscard]] constexpr bool valid() const { return value != std::numeric_limits<std::uint32_t>::max(); }
    [[nodiscard]] constexpr std::size_t index() const { return value; }
    constexpr auto operator<=>(const StrongId&) const = default;
};

}  // namespace clustersim::engine
