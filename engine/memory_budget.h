// The memory budget of a run: what clustersim may allocate before it refuses to go on. Inputs are capped by it,
// plans estimate what they need against it before building, and (outside sanitizer builds) the process's data
// limit is set to it, so that an allocation past the budget fails as std::bad_alloc, reported as an input error
// naming what was being built, instead of the machine's out-of-memory killer ending the process.
//
// Default: 80% of the smallest of the machine's physical memory, the cgroup's memory.max and RLIMIT_AS /
// RLIMIT_DATA, whichever are set; `--max-memory` overrides it.
#pragma once

#include <cstdint>
#include <string>

namespace clustersim::engine {

/// The budget in bytes (computed on first use unless set).
[[nodiscard]] std::uint64_t memory_budget();
/// Sets the budget (from --max-memory; tests); apply_memory_limit makes it the process's limit.
void set_memory_budget(std::uint64_t bytes);
/// Applies the current budget as the data limit (RLIMIT_DATA); does nothing under ASan, whose shadow memory
/// counts against that limit.
void apply_memory_limit();

/// Throws InputError at `where_file` when `estimate` bytes exceed the budget: "{what} needs about X, more than the
/// memory budget of Y (--max-memory); {hint}".
void require_memory(double estimate, const std::string& what, const std::string& hint, const std::string& where_file);

/// What is being built, for the message when an allocation fails (a stack of scopes, innermost last).
class MemoryScope {
public:
    explicit MemoryScope(std::string what);
    ~MemoryScope();
    MemoryScope(const MemoryScope&) = delete;
    MemoryScope& operator=(const MemoryScope&) = delete;

private:
    int uncaught_;
};
/// The description of the innermost scope an exception last unwound, else the innermost open one, else "".
[[nodiscard]] std::string memory_scope();

/// "1.5 GB" style, for messages.
[[nodiscard]] std::string format_memory(double bytes);

}  // namespace clustersim::engine
