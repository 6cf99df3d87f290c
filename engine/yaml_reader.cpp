// Located YAML access, type checks with "expected X, got Y" messages, and --set overrides.
#include "engine/yaml_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "engine/memory_budget.h"
#include "engine/units.h"

namespace clustersim::engine {

namespace {
std::string child_path(const std::string& parent, std::string_view key) {
    return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}
}  // namespace

namespace {
// Rejects a map that lists a key twice (yaml-cpp keeps both and lookups see the first), walking the document with
// an explicit stack so that deep nesting cannot overflow the call stack.
void reject_duplicate_keys(const YAML::Node& root, const std::string& file) {
    std::vector<YAML::Node> stack{root};
    // Each collection is checked once: an alias is the same node as its anchor (same mark), so a "billion laughs"
    // document of nested aliases costs its size in text, not its expansion.
    std::set<std::pair<int, int>> seen_collections;
    while (!stack.empty()) {
        const YAML::Node node = stack.back();
        stack.pop_back();
        if ((node.IsMap() || node.IsSequence()) && node.Mark().pos >= 0 &&
            !seen_collections.emplace(node.Mark().line, node.Mark().column).second)
            continue;
        if (node.IsMap()) {
            std::vector<std::pair<std::string, YAML::Mark>> seen;
            for (auto it = node.begin(); it != node.end(); ++it) {
                const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string{};
                for (const auto& [k, mark] : seen) {
                    if (k == key && it->first.IsScalar())
                        throw InputError(
                            SourceLocation{file, it->first.Mark().line + 1, it->first.Mark().column + 1, key},
                            fmt::format("duplicate key '{}' (first at line {})", key, mark.line + 1));
                }
                seen.emplace_back(key, it->first.Mark());
                stack.push_back(it->second);
            }
        } else if (node.IsSequence()) {
            for (const auto& element : node) stack.push_back(element);
        }
    }
}
}  // namespace

YamlValue YamlValue::load_string(std::string_view text, const std::string& name) {
    auto doc = std::make_shared<Document>(Document{name, {}});
    try {
        YAML::Node root = YAML::Load(std::string(text));
        reject_duplicate_keys(root, name);
        return YamlValue(root, doc, "");
    } catch (const YAML::ParserException& e) {
        throw InputError(SourceLocation{name, e.mark.line + 1, e.mark.column + 1, ""},
                         fmt::format("YAML syntax error: {}", e.msg));
    }
}

YamlValue YamlValue::load_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(SourceLocation{path}, "cannot open file");
    // Capped: yaml-cpp's node tree takes tens of bytes per byte of text, so a file beyond 1/64 of the memory
    // budget (or /dev/zero) is refused while reading, not after exhausting memory.
    const std::uint64_t cap = memory_budget() / 64;
    std::string text;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > cap)
            throw InputError(SourceLocation{path},
                             fmt::format("more than {} of YAML: beyond what the memory budget of {} (--max-memory) "
                                         "can parse",
                                         format_memory(static_cast<double>(cap)),
                                         format_memory(static_cast<double>(memory_budget()))));
    }
    return load_string(text, path);
}

SourceLocation YamlValue::location() const {
    for (const auto& overridden : doc_->overridden_paths) {
        if (path_ == overridden || path_.rfind(overridden + ".", 0) == 0 || path_.rfind(overridden + "[", 0) == 0)
            return SourceLocation{"--set", 0, 0, path_};
    }
    const YAML::Mark mark = node_.Mark();
    if (mark.is_null()) return SourceLocation{doc_->file, 0, 0, path_};
    return SourceLocation{doc_->file, mark.line + 1, mark.column + 1, path_};
}

void YamlValue::fail(const std::string& message) const { throw InputError(location(), message); }

std::optional<YamlValue> YamlValue::find(std::string_view key) const {
    if (!node_.IsMap()) fail(fmt::format("expected a map with key '{}'", key));
    for (auto it = node_.begin(); it != node_.end(); ++it) {
        if (it->first.IsScalar() && it->first.Scalar() == key)
            return YamlValue(it->second, doc_, child_path(path_, key));
    }
    return std::nullopt;
}

YamlValue YamlValue::require(std::string_view key) const {
    auto child = find(key);
    if (!child) fail(fmt::format("missing required key '{}'", key));
    return *child;
}

std::vector<std::string> YamlValue::keys() const {
    if (!node_.IsMap()) fail("expected a map");
    std::vector<std::string> out;
    for (auto it = node_.begin(); it != node_.end(); ++it) out.push_back(it->first.Scalar());
    return out;
}

void YamlValue::expect_only_keys(const std::vector<std::string>& allowed) const {
    if (!node_.IsMap()) fail("expected a map");
    for (auto it = node_.begin(); it != node_.end(); ++it) {
        const std::string key = it->first.Scalar();
        if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
        YamlValue child(it->first, doc_, child_path(path_, key));
        child.fail(fmt::format("unknown key '{}' (allowed: {})", key, joined(allowed)));
    }
}

void YamlValue::expect_only_keys(std::initializer_list<std::string_view> allowed) const {
    std::vector<std::string> names;
    for (auto a : allowed) names.emplace_back(a);
    expect_only_keys(names);
}

std::vector<YamlValue> YamlValue::elements() const {
    if (!node_.IsSequence()) fail("expected a list");
    std::vector<YamlValue> out;
    out.reserve(node_.size());
    for (std::size_t i = 0; i < node_.size(); ++i)
        out.push_back(YamlValue(node_[i], doc_, fmt::format("{}[{}]", path_, i)));
    return out;
}

std::string YamlValue::scalar_or_fail(std::string_view expected) const {
    if (!node_.IsScalar())
        fail(fmt::format("expected {}, got {}", expected,
                         node_.IsMap()        ? "a map"
                         : node_.IsSequence() ? "a list"
                                              : "nothing"));
    return node_.Scalar();
}

std::string YamlValue::as_string() const { return scalar_or_fail("a string"); }

std::int64_t YamlValue::as_int() const {
    const std::string s = scalar_or_fail("an integer");
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) fail(fmt::format("expected an integer, got \"{}\"", s));
    return v;
}

double YamlValue::as_double() const {
    const std::string s = scalar_or_fail("a number");
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
        fail(fmt::format("expected a number, got \"{}\"", s));
    return v;
}

bool YamlValue::as_bool() const {
    const std::string s = scalar_or_fail("true or false");
    if (s == "true") return true;
    if (s == "false") return false;
    fail(fmt::format("expected true or false, got \"{}\"", s));
}

Time YamlValue::as_time() const { return parse_time(scalar_or_fail("a time like \"2 us\""), location()); }
std::uint64_t YamlValue::as_bytes() const { return parse_bytes(scalar_or_fail("a size like \"64 MiB\""), location()); }
double YamlValue::as_rate() const { return parse_rate(scalar_or_fail("a rate like \"400 Gb/s\""), location()); }

void YamlValue::apply_override(std::string_view assignment) {
    const auto eq = assignment.find('=');
    const SourceLocation where{"--set", 0, 0, std::string(assignment)};
    if (eq == std::string_view::npos || eq == 0) throw InputError(where, "expected key=value, like topology.nodes=4");
    const std::string key(assignment.substr(0, eq));
    const std::string value(assignment.substr(eq + 1));
    if (!node_.IsMap() && !node_.IsNull()) throw InputError(where, "the document is not a map");
    // Walk "a.b[2].c": maps by key (created when missing), sequences by index (must exist).
    std::vector<std::pair<std::string, long>> parts;  // key, or index >= 0
    std::size_t i = 0;
    while (i < key.size()) {
        if (key[i] == '.') {
            ++i;
            continue;
        }
        if (key[i] == '[') {
            const auto close = key.find(']', i);
            if (close == std::string::npos) throw InputError(where, "unclosed '[' in key");
            long index = -1;
            const auto [p, ec] = std::from_chars(key.data() + i + 1, key.data() + close, index);
            if (ec != std::errc() || p != key.data() + close || index < 0)
                throw InputError(where, "bad list index in key");
            parts.emplace_back("", index);
            i = close + 1;
            continue;
        }
        const auto stop = key.find_first_of(".[", i);
        parts.emplace_back(key.substr(i, stop - i), -1);
        i = stop == std::string::npos ? key.size() : stop;
    }
    if (parts.empty()) throw InputError(where, "empty key");
    YAML::Node parsed;
    try {
        parsed = YAML::Load(value);
    } catch (const YAML::ParserException& e) {
        throw InputError(where, fmt::format("value is not valid YAML: {}", e.msg));
    }
    std::vector<YAML::Node> chain{node_};
    for (std::size_t k = 0; k < parts.size(); ++k) {
        YAML::Node current = chain.back();
        const bool last = k + 1 == parts.size();
        const auto& [name, index] = parts[k];
        if (index >= 0) {
            if (!current.IsSequence() || static_cast<std::size_t>(index) >= current.size())
                throw InputError(where, fmt::format("no list element [{}] there", index));
            if (last)
                current[static_cast<std::size_t>(index)] = parsed;
            else
                chain.push_back(current[static_cast<std::size_t>(index)]);
        } else {
            if (!current.IsMap() && !current.IsNull())
                throw InputError(where, fmt::format("'{}' is not inside a map", name));
            if (last) {
                current[name] = parsed;
            } else {
                if (!current[name]) current[name] = YAML::Node(YAML::NodeType::Map);  // create missing levels
                chain.push_back(current[name]);
            }
        }
    }
    std::string normalized;
    for (const auto& [name, index] : parts)
        normalized += index >= 0 ? fmt::format("[{}]", index) : (normalized.empty() ? name : "." + name);
    doc_->overridden_paths.push_back(normalized);
}

std::string YamlValue::dump() const {
    YAML::Emitter out;
    out << node_;
    return std::string(out.c_str()) + "\n";
}

}  // namespace clustersim::engine
