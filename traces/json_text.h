// Small helpers for writing JSON text directly (the writers stream JSON rather than build a document, so large
// timelines stay cheap and the bytes are the same on every machine).
#pragma once

#include <string>
#include <string_view>

namespace clustersim::traces {

/// `text` as a JSON string literal, quotes included.
std::string json_string(std::string_view text);
/// The same, appended to `out` (writers of large outputs: no string per value).
void append_json_string(std::string& out, std::string_view text);

/// A double in the shortest form that reads back to the same value ("1e+12", "0.5"); integers without ".0".
std::string json_number(double value);
void append_json_number(std::string& out, double value);

}  // namespace clustersim::traces
