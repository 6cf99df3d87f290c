// One table maps an enumeration's values to the names used in YAML and JSON, both ways. Kinds of devices,
// links, ops, collectives and so on each declare such a table and look names up through these helpers.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace clustersim::engine {

template <class Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, const char*>, N>;

/// The name of `value`, or "?" when the table lacks it.
template <class Enum, std::size_t N>
constexpr const char* enum_name(const NameTable<Enum, N>& table, Enum value) {
    for (const auto& [v, name] : table) {
        if (v == value) return name;
    }
    return "?";
}

/// The value named `text`, or nullopt.
template <class Enum, std::size_t N>
std::optional<Enum> enum_from_name(const NameTable<Enum, N>& table, std::string_view text) {
    for (const auto& [v, name] : table) {
        if (text == name) return v;
    }
    return std::nullopt;
}

/// "a, b, c" for messages that list the valid names.
template <class Enum, std::size_t N>
std::string enum_names(const NameTable<Enum, N>& table) {
    std::string out;
    for (const auto& [v, name] : table) out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
}

}  // namespace clustersim::engine
