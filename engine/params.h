// Parameters of a registered component (topology preset, collective algorithm, workload generator): a spec
// table (name, type, default, help) drives decoding, defaults, rejection of unknown keys, --list and docs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/enum_names.h"
#include "engine/error.h"
#include "engine/time.h"

namespace clustersim::engine {

class YamlValue;

enum class ParamType { integer, number, string, boolean, time, bytes, rate };

/// "integer", "time", ... as shown in --list and docs.
const char* param_type_name(ParamType type);

/// One parameter a component accepts. The default is text, parsed like user input, so it shows as written.
struct ParamSpec {
    std::string name;
    ParamType type = ParamType::string;
    std::string default_value;  // "" with required = true means the user must give it
    std::string help;
    bool required = false;
};

/// Values of one component's parameters, checked against its specs, each with where it came from.
class Params {
public:
    /// Reads the keys of `map` listed in `specs` (all other keys must be in `also_allowed`, or are rejected).
    /// Every value is parsed once here, so a bad one fails at load time with its location.
    static Params from_yaml(const YamlValue& map, const std::vector<ParamSpec>& specs,
                            const std::vector<std::string>& also_allowed = {});
    /// Defaults only (for tests and built-in uses).
    static Params defaults(const std::vector<ParamSpec>& specs);
    /// Replaces one value, as if the user had written it (used by composite presets).
    void set(const std::string& name, const std::string& text);

    [[nodiscard]] std::int64_t integer(const std::string& name) const;
    /// An integer from `min` to `max`; outside, a located error saying so.
    [[nodiscard]] std::int64_t integer_in(const std::string& name, std::int64_t min, std::int64_t max) const;
    [[nodiscard]] double number(const std::string& name) const;
    [[nodiscard]] const std::string& string(const std::string& name) const;
    /// The value as written, whatever its type (for descriptions and messages).
    [[nodiscard]] const std::string& text(const std::string& name) const;
    [[nodiscard]] bool boolean(const std::string& name) const;
    [[nodiscard]] Time time(const std::string& name) const;
    [[nodiscard]] std::uint64_t bytes(const std::string& name) const;
    [[nodiscard]] double rate(const std::string& name) const;
    /// Where the value came from (the YAML node, or the spec's default).
    [[nodiscard]] const SourceLocation& location(const std::string& name) const;
    /// Throws an InputError located at the parameter's value.
    [[noreturn]] void fail(const std::string& name, const std::string& message) const;

    struct Value {
        const ParamSpec* spec = nullptr;
        std::string text;
        SourceLocation where;
    };
    [[nodiscard]] const std::vector<Value>& values() const { return values_; }

private:
    [[nodiscard]] const Value& find(const std::string& name, ParamType type) const;
    std::vector<Value> values_;
};

/// The value of string parameter `name` looked up in `table`; a name not in it is a located error listing them.
template <class Enum, std::size_t N>
Enum choose(const Params& params, const std::string& name, const NameTable<Enum, N>& table, const char* what) {
    const std::string& text = params.string(name);
    const auto value = enum_from_name(table, text);
    if (!value)
        params.fail(name, "unknown " + std::string(what) + " '" + text + "' (known: " + enum_names(table) + ")");
    return *value;
}

/// Checks that `text` parses as `type`; throws a located InputError otherwise.
void validate_param(ParamType type, const std::string& text, const SourceLocation& where);

}  // namespace clustersim::engine
