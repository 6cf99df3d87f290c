// Checked YAML reading: every value knows its file, line, column and key path, so any complaint about it is
// located. Loaders decode a YamlValue into plain spec structs once; nothing below a loader sees YAML.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "engine/error.h"
#include "engine/time.h"

namespace clustersim::engine {

/// A node of a parsed YAML document with its location. Cheap to copy (shares the document).
class YamlValue {
public:
    /// Parses a file; a syntax error becomes an InputError at its line and column.
    static YamlValue load_file(const std::string& path);
    /// Parses text; `name` stands for the file in messages.
    static YamlValue load_string(std::string_view text, const std::string& name);

    [[nodiscard]] SourceLocation location() const;
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] bool is_map() const { return node_.IsMap(); }
    [[nodiscard]] bool is_sequence() const { return node_.IsSequence(); }
    [[nodiscard]] bool is_scalar() const { return node_.IsScalar(); }
    [[nodiscard]] bool is_null() const { return node_.IsNull(); }

    /// The child at `key` of a map, or nullopt when absent. Throws if this is not a map.
    [[nodiscard]] std::optional<YamlValue> find(std::string_view key) const;
    /// The child at `key`; throws a located "missing key" error when absent.
    [[nodiscard]] YamlValue require(std::string_view key) const;
    /// Keys of a map in document order.
    [[nodiscard]] std::vector<std::string> keys() const;
    /// Rejects any key not in `allowed`, naming it and listing the allowed ones.
    void expect_only_keys(std::initializer_list<std::string_view> allowed) const;
    void expect_only_keys(const std::vector<std::string>& allowed) const;

    /// Elements of a sequence. Throws if this is not a sequence.
    [[nodiscard]] std::vector<YamlValue> elements() const;

    [[nodiscard]] std::string as_string() const;
    [[nodiscard]] std::int64_t as_int() const;
    [[nodiscard]] double as_double() const;
    [[nodiscard]] bool as_bool() const;
    [[nodiscard]] Time as_time() const;
    [[nodiscard]] std::uint64_t as_bytes() const;
    [[nodiscard]] double as_rate() const;

    /// Throws an InputError located at this value.
    [[noreturn]] void fail(const std::string& message) const;

    /// Applies a command-line override "a.b[2].c=value" to the document this value is the root of. The value is
    /// parsed as YAML (so "[1, 2]" is a list). Errors and later complaints about it point to "--set a.b[2].c".
    void apply_override(std::string_view assignment);

    /// The document (with overrides applied) as YAML text, for resolved.yaml.
    [[nodiscard]] std::string dump() const;

private:
    struct Document {
        std::string file;
        std::vector<std::string> overridden_paths;
    };
    YamlValue(YAML::Node node, std::shared_ptr<Document> doc, std::string path)
        : node_(std::move(node)), doc_(std::move(doc)), path_(std::move(path)) {}
    [[nodiscard]] std::string scalar_or_fail(std::string_view expected) const;

    YAML::Node node_;
    std::shared_ptr<Document> doc_;
    std::string path_;
};

}  // namespace clustersim::engine
