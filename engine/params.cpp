// Decoding and typed access of component parameters.
#include "engine/params.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "engine/units.h"
#include "engine/yaml_reader.h"

namespace clustersim::engine {

const char* param_type_name(ParamType type) {
    switch (type) {
        case ParamType::integer:
            return "integer";
        case ParamType::number:
            return "number";
        case ParamType::string:
            return "string";
        case ParamType::boolean:
            return "boolean";
        case ParamType::time:
            return "time";
        case ParamType::bytes:
            return "size";
        case ParamType::rate:
            return "rate";
    }
    return "?";
}

namespace {
std::int64_t parse_integer(const std::string& text, const SourceLocation& where) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size())
        throw InputError(where, fmt::format("expected an integer, got \"{}\"", text));
    return v;
}

double parse_number(const std::string& text, const SourceLocation& where) {
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
        throw InputError(where, fmt::format("expected a number, got \"{}\"", text));
    return v;
}

bool parse_boolean(const std::string& text, const SourceLocation& where) {
    if (text == "true") return true;
    if (text == "false") return false;
    throw InputError(where, fmt::format("expected true or false, got \"{}\"", text));
}
}  // namespace

void validate_param(ParamType type, const std::string& text, const SourceLocation& where) {
    switch (type) {
        case ParamType::integer:
            (void)parse_integer(text, where);
            break;
        case ParamType::number:
            (void)parse_number(text, where);
            break;
        case ParamType::string:
            break;
        case ParamType::boolean:
            (void)parse_boolean(text, where);
            break;
        case ParamType::time:
            (void)parse_time(text, where);
            break;
        case ParamType::bytes:
            (void)parse_bytes(text, where);
            break;
        case ParamType::rate:
            (void)parse_rate(text, where);
            break;
    }
}

Params Params::defaults(const std::vector<ParamSpec>& specs) {
    Params p;
    for (const ParamSpec& s : specs)
        p.values_.push_back(Value{&s, s.default_value, SourceLocation{"(default)", 0, 0, s.name}});
    return p;
}

Params Params::from_yaml(const YamlValue& map, const std::vector<ParamSpec>& specs,
                         const std::vector<std::string>& also_allowed) {
    std::vector<std::string> allowed = also_allowed;
    for (const ParamSpec& s : specs) allowed.push_back(s.name);
    map.expect_only_keys(allowed);
    Params p;
    for (const ParamSpec& s : specs) {
        if (auto v = map.find(s.name)) {
            const std::string text = v->as_string();
            validate_param(s.type, text, v->location());
            p.values_.push_back(Value{&s, text, v->location()});
        } else {
            if (s.required) map.fail(fmt::format("missing required parameter '{}' ({})", s.name, s.help));
            p.values_.push_back(Value{&s, s.default_value, SourceLocation{"(default)", 0, 0, s.name}});
        }
    }
    return p;
}

void Params::set(const std::string& name, const std::string& text) {
    for (Value& v : values_) {
        if (v.spec->name != name) continue;
        validate_param(v.spec->type, text, v.where);
        v.text = text;
        return;
    }
    CLUSTERSIM_CHECK(false, "no parameter '{}' to set", name);
}

const Params::Value& Params::find(const std::string& name, ParamType type) const {
    for (const Value& v : values_) {
        if (v.spec->name != name) continue;
        CLUSTERSIM_CHECK(v.spec->type == type, "parameter '{}' is a {}, read as a {}", name,
                         param_type_name(v.spec->type), param_type_name(type));
        return v;
    }
    CLUSTERSIM_CHECK(false, "no parameter '{}'", name);
    throw;  // unreachable
}

std::int64_t Params::integer(const std::string& name) const {
    const Value& v = find(name, ParamType::integer);
    return parse_integer(v.text, v.where);
}

std::int64_t Params::integer_in(const std::string& name, std::int64_t min, std::int64_t max) const {
    const std::int64_t v = integer(name);
    if (v < min || v > max) fail(name, fmt::format("expected an integer from {} to {}, got {}", min, max, v));
    return v;
}
double Params::number(const std::string& name) const {
    const Value& v = find(name, ParamType::number);
    return parse_number(v.text, v.where);
}
const std::string& Params::string(const std::string& name) const { return find(name, ParamType::string).text; }
const std::string& Params::text(const std::string& name) const {
    for (const Value& v : values_) {
        if (v.spec->name == name) return v.text;
    }
    CLUSTERSIM_CHECK(false, "no parameter '{}'", name);
    throw;
}
bool Params::boolean(const std::string& name) const {
    const Value& v = find(name, ParamType::boolean);
    return parse_boolean(v.text, v.where);
}
Time Params::time(const std::string& name) const {
    const Value& v = find(name, ParamType::time);
    return parse_time(v.text, v.where);
}
std::uint64_t Params::bytes(const std::string& name) const {
    const Value& v = find(name, ParamType::bytes);
    return parse_bytes(v.text, v.where);
}
double Params::rate(const std::string& name) const {
    const Value& v = find(name, ParamType::rate);
    return parse_rate(v.text, v.where);
}

const SourceLocation& Params::location(const std::string& name) const {
    for (const Value& v : values_) {
        if (v.spec->name == name) return v.where;
    }
    CLUSTERSIM_CHECK(false, "no parameter '{}'", name);
    throw;
}

void Params::fail(const std::string& name, const std::string& message) const {
    throw InputError(location(name), message);
}

}  // namespace clustersim::engine
