// A sweep's filter: a boolean expression over the axis values of a point, e.g.
// "workload.tp * workload.pp <= 64 and system.collective_algorithm != 'ring'". Numbers, axis keys (dotted names),
// 'quoted' strings; + - * / % and parentheses; < <= > >= == !=; and, or, not (also &&, ||, !). An axis whose value
// is not a number compares as text (== and != only). Parsed once, located errors at the character.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/error.h"

namespace clustersim::sim {

class FilterExpression {
public:
    /// Parses `text`; `known_keys` are the axis keys it may name. `where` locates errors (the sweep file's key).
    FilterExpression(const std::string& text, const std::vector<std::string>& known_keys,
                     const engine::SourceLocation& where);
    ~FilterExpression();
    FilterExpression(FilterExpression&&) noexcept;
    FilterExpression& operator=(FilterExpression&&) noexcept;

    /// Whether the point with these (key, value text) pairs passes.
    [[nodiscard]] bool accepts(const std::vector<std::pair<std::string, std::string>>& point) const;

    struct Node;

private:
    std::unique_ptr<Node> root_;
    std::string text_;
    engine::SourceLocation where_;
};

}  // namespace clustersim::sim
