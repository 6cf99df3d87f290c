// Lists given as text, "a,b,c": the items between separators, as written (callers trim and check them).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace clustersim::engine {

/// The items of `text` between `separator`s, untrimmed: "a, b" gives "a" and " b"; "" gives one empty item, and
/// "a," an empty last one (so that a caller's check of each item reports them).
std::vector<std::string> split_list(std::string_view text, char separator = ',');

}  // namespace clustersim::engine
