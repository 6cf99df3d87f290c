#include "sim/sweep/filter_expression.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>

namespace clustersim::sim {

namespace {

/// A value: a number, or text (an axis value that is not a number, or a quoted string).
struct Value {
    bool is_number = true;
    double number = 0;
    std::string text;
};

std::optional<double> as_number(const std::string& s) {
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return v;
}

}  // namespace

struct FilterExpression::Node {
    enum class Kind { number, text, key, unary_minus, logical_not, binary } kind = Kind::number;
    double number = 0;
    std::string text;  // text literal, key, or operator
    std::unique_ptr<Node> left, right;
};

namespace {

using Node = FilterExpression::Node;

class Parser {
public:
    Parser(const std::string& text, const std::vector<std::string>& keys, const engine::SourceLocation& where)
        : s_(text), keys_(keys), where_(where) {}

    std::unique_ptr<Node> parse() {
        auto node = disjunction();
        skip();
        if (at_ < s_.size()) fail(fmt::format("unexpected '{}'", s_.substr(at_, 1)));
        return node;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw engine::InputError(where_, fmt::format("filter \"{}\", at character {}: {}", s_, at_ + 1, what));
    }
    void skip() {
        while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
    }
    bool take(std::string_view token) {
        skip();
        if (s_.compare(at_, token.size(), token) != 0) return false;
        // A word operator must end at a word boundary ("order" is not "or" + "der").
        if (std::isalpha(static_cast<unsigned char>(token.back())) && at_ + token.size() < s_.size() &&
            (std::isalnum(static_cast<unsigned char>(s_[at_ + token.size()])) || s_[at_ + token.size()] == '_'))
            return false;
        at_ += token.size();
        return true;
    }
    static std::unique_ptr<Node> binary(std::string op, std::unique_ptr<Node> l, std::unique_ptr<Node> r) {
        auto n = std::make_unique<Node>();
        n->kind = Node::Kind::binary;
        n->text = std::move(op);
        n->left = std::move(l);
        n->right = std::move(r);
        return n;
    }
    std::unique_ptr<Node> disjunction() {
        auto node = conjunction();
        while (take("||") || take("or")) node = binary("or", std::move(node), conjunction());
        return node;
    }
    std::unique_ptr<Node> conjunction() {
        auto node = negation();
        while (take("&&") || take("and")) node = binary("and", std::move(node), negation());
        return node;
    }
    std::unique_ptr<Node> negation() {
        skip();
        if (s_.compare(at_, 2, "!=") != 0 && (take("!") || take("not"))) {
            auto n = std::make_unique<Node>();
            n->kind = Node::Kind::logical_not;
            n->left = negation();
            return n;
        }
        return comparison();
    }
    std::unique_ptr<Node> comparison() {
        auto node = additive();
        for (const char* op : {"<=", ">=", "==", "!=", "<", ">"}) {
            if (take(op)) return binary(op, std::move(node), additive());
        }
        return node;
    }
    std::unique_ptr<Node> additive() {
        auto node = multiplicative();
        while (true) {
            if (take("+"))
                node = binary("+", std::move(node), multiplicative());
            else if (take("-"))
                node = binary("-", std::move(node), multiplicative());
            else
                return node;
        }
    }
    std::unique_ptr<Node> multiplicative() {
        auto node = unary();
        while (true) {
            if (take("*"))
                node = binary("*", std::move(node), unary());
            else if (take("/"))
                node = binary("/", std::move(node), unary());
            else if (take("%"))
                node = binary("%", std::move(node), unary());
            else
                return node;
        }
    }
    std::unique_ptr<Node> unary() {
        if (take("-")) {
            auto n = std::make_unique<Node>();
            n->kind = Node::Kind::unary_minus;
            n->left = unary();
            return n;
        }
        return primary();
    }
    std::unique_ptr<Node> primary() {
        skip();
        if (at_ >= s_.size()) fail("expected a number, an axis key, a 'string' or '('");
        auto n = std::make_unique<Node>();
        const char c = s_[at_];
        if (take("(")) {
            n = disjunction();
            if (!take(")")) fail("expected ')'");
            return n;
        }
        if (c == '\'' || c == '"') {
            const std::size_t end = s_.find(c, at_ + 1);
            if (end == std::string::npos) fail("unterminated string");
            n->kind = Node::Kind::text;
            n->text = s_.substr(at_ + 1, end - at_ - 1);
            at_ = end + 1;
            return n;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
            std::size_t end = at_;
            while (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '.')) ++end;
            const auto v = as_number(s_.substr(at_, end - at_));
            if (!v) fail(fmt::format("'{}' is not a number", s_.substr(at_, end - at_)));
            n->kind = Node::Kind::number;
            n->number = *v;
            at_ = end;
            return n;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            std::size_t end = at_;
            while (end < s_.size() &&
                   (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_' || s_[end] == '.'))
                ++end;
            n->kind = Node::Kind::key;
            n->text = s_.substr(at_, end - at_);
            if (std::find(keys_.begin(), keys_.end(), n->text) == keys_.end())
                fail(fmt::format("'{}' is not an axis of the sweep", n->text));
            at_ = end;
            return n;
        }
        fail(fmt::format("unexpected '{}'", std::string(1, c)));
    }

    const std::string& s_;
    const std::vector<std::string>& keys_;
    const engine::SourceLocation& where_;
    std::size_t at_ = 0;
};

Value evaluate(const Node& n, const std::vector<std::pair<std::string, std::string>>& point, const std::string& text,
               const engine::SourceLocation& where) {
    auto fail = [&](const std::string& what) {
        throw engine::InputError(where, fmt::format("filter \"{}\": {}", text, what));
    };
    auto truth = [](const Value& v) { return v.is_number ? v.number != 0 : !v.text.empty(); };
    switch (n.kind) {
        case Node::Kind::number:
            return {true, n.number, {}};
        case Node::Kind::text:
            return {false, 0, n.text};
        case Node::Kind::key: {
            for (const auto& [key, value] : point) {
                if (key != n.text) continue;
                if (const auto v = as_number(value)) return {true, *v, value};
                return {false, 0, value};
            }
            fail(fmt::format("the point has no value for '{}'", n.text));
            return {};
        }
        case Node::Kind::unary_minus: {
            const Value v = evaluate(*n.left, point, text, where);
            if (!v.is_number) fail(fmt::format("cannot negate '{}'", v.text));
            return {true, -v.number, {}};
        }
        case Node::Kind::logical_not:
            return {true, truth(evaluate(*n.left, point, text, where)) ? 0.0 : 1.0, {}};
        case Node::Kind::binary:
            break;
    }
    const std::string& op = n.text;
    const Value a = evaluate(*n.left, point, text, where);
    if (op == "and" && !truth(a)) return {true, 0, {}};
    if (op == "or" && truth(a)) return {true, 1, {}};
    const Value b = evaluate(*n.right, point, text, where);
    if (op == "and" || op == "or") return {true, truth(b) ? 1.0 : 0.0, {}};
    if (op == "==" || op == "!=") {
        const bool equal = a.is_number && b.is_number ? a.number == b.number : a.text == b.text && !a.text.empty();
        return {true, (op == "==") == equal ? 1.0 : 0.0, {}};
    }
    if (!a.is_number || !b.is_number)
        fail(fmt::format("'{}' needs numbers, got '{}' and '{}'", op,
                         a.is_number ? fmt::format("{}", a.number) : a.text,
                         b.is_number ? fmt::format("{}", b.number) : b.text));
    const double x = a.number, y = b.number;
    if (op == "+") return {true, x + y, {}};
    if (op == "-") return {true, x - y, {}};
    if (op == "*") return {true, x * y, {}};
    if (op == "/") return {true, x / y, {}};
    if (op == "%") return {true, std::fmod(x, y), {}};
    if (op == "<") return {true, x < y ? 1.0 : 0.0, {}};
    if (op == "<=") return {true, x <= y ? 1.0 : 0.0, {}};
    if (op == ">") return {true, x > y ? 1.0 : 0.0, {}};
    return {true, x >= y ? 1.0 : 0.0, {}};
}

}  // namespace

FilterExpression::FilterExpression(const std::string& text, const std::vector<std::string>& known_keys,
                                   const engine::SourceLocation& where)
    : root_(Parser(text, known_keys, where).parse()), text_(text), where_(where) {}
FilterExpression::~FilterExpression() = default;
FilterExpression::FilterExpression(FilterExpression&&) noexcept = default;
FilterExpression& FilterExpression::operator=(FilterExpression&&) noexcept = default;

bool FilterExpression::accepts(const std::vector<std::pair<std::string, std::string>>& point) const {
    const Value v = evaluate(*root_, point, text_, where_);
    return v.is_number ? v.number != 0 : !v.text.empty();
}

}  // namespace clustersim::sim
