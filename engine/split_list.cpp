// Lists given as text (see split_list.h).
#include "engine/split_list.h"

#include <algorithm>

namespace clustersim::engine {

std::vector<std::string> split_list(std::string_view text, char separator) {
    std::vector<std::string> items;
    for (std::size_t begin = 0; begin <= text.size();) {
        const std::size_t end = std::min(text.find(separator, begin), text.size());
        items.emplace_back(text.substr(begin, end - begin));
        begin = end + 1;
    }
    return items;
}

}  // namespace clustersim::engine
