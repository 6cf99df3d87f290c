// JSON string escaping and round-trip number formatting.
#include "traces/json_text.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace clustersim::traces {

std::string json_string(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 2);
    out.push_back('"');
    for (const char c : text) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20)
                    out += fmt::format("\\u{:04x}", static_cast<int>(c));
                else
                    out.push_back(c);
        }
    }
    out.push_back('"');
    return out;
}

std::string json_number(double value) {
    if (!std::isfinite(value)) return "null";
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);  // shortest round-trip form
    return std::string(buffer, ec == std::errc() ? end : buffer);
}

}  // namespace clustersim::traces
