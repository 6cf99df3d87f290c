// Formatting of located input errors and of failed invariant checks.
#include "engine/error.h"

namespace clustersim::engine {

std::string SourceLocation::describe() const {
    std::string out = file;
    if (!file.empty() && line > 0) {
        out += fmt::format(":{}", line);
        if (column > 0) out += fmt::format(":{}", column);
    }
    if (!key_path.empty()) out += out.empty() ? key_path : ": " + key_path;
    return out;
}

static std::string located(const SourceLocation& where, const std::string& message) {
    const std::string prefix = where.describe();
    return prefix.empty() ? message : prefix + ": " + message;
}

InputError::InputError(SourceLocation where, const std::string& message)
    : std::runtime_error(located(where, message)), where_(std::move(where)), message_(message) {}

void fail_check(const char* file, int line, const char* condition, const std::string& message) {
    throw InternalError(fmt::format("internal error at {}:{}: check '{}' failed: {}", file, line, condition, message));
}

}  // namespace clustersim::engine
