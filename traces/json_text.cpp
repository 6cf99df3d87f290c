// JSON string escaping and round-trip number formatting.
#include "traces/json_text.h"

#include <charconv>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

namespace clustersim::traces {

void append_json_string(std::string& out, std::string_view text) {
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
                    fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<int>(c));
                else
                    out.push_back(c);
        }
    }
    out.push_back('"');
}

std::string json_string(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 2);
    append_json_string(out, text);
    return out;
}

void append_json_number(std::string& out, double value) {
    if (!std::isfinite(value)) {
        out += "null";
        return;
    }
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);  // shortest round-trip form
    out.append(buffer, ec == std::errc() ? end : buffer);
}

std::string json_number(double value) {
    std::string out;
    append_json_number(out, value);
    return out;
}

}  // namespace clustersim::traces
