// Errors: InputError for bad input (always located: file, line, column, key path) and InternalError for broken
// invariants, raised by CLUSTERSIM_CHECK, which stays on in release builds.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace clustersim::engine {

/// Where an input value came from. Line and column are 1-based; 0 means unknown.
struct SourceLocation {
    std::string file;
    int line = 0;
    int column = 0;
    std::string key_path;  // "topology.links[2].bandwidth"

    /// "file:line:col: key" with the parts that are known, or "" when nothing is.
    [[nodiscard]] std::string describe() const;
    bool operator==(const SourceLocation&) const = default;
};

/// Bad input from the user: a YAML value, a trace, a command-line option. Its message names where and what.
class InputError : public std::runtime_error {
public:
    InputError(SourceLocation where, const std::string& message);
    explicit InputError(const std::string& message) : InputError(SourceLocation{}, message) {}
    [[nodiscard]] const SourceLocation& where() const { return where_; }
    [[nodiscard]] const std::string& message() const { return message_; }

private:
    SourceLocation where_;
    std::string message_;
};

/// A bug in clustersim: an invariant did not hold.
class InternalError : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

[[noreturn]] void fail_check(const char* file, int line, const char* condition, const std::string& message);

}  // namespace clustersim::engine

/// Checks an invariant; on failure throws InternalError with file, line, the condition and a formatted message.
#define CLUSTERSIM_CHECK(cond, ...)                                                                         \
    do {                                                                                                    \
        if (!(cond)) ::clustersim::engine::fail_check(__FILE__, __LINE__, #cond, fmt::format(__VA_ARGS__)); \
    } while (false)
