// Budget from the machine's limits; the data limit; the scope stack for out-of-memory messages.
#include "engine/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "engine/error.h"

namespace clustersim::engine {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool address_sanitizer = true;
#else
constexpr bool address_sanitizer = false;
#endif
#else
constexpr bool address_sanitizer = false;
#endif

std::uint64_t machine_limit() {
    std::uint64_t limit = UINT64_MAX;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) limit = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
    for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        std::ifstream in(path);
        std::uint64_t v = 0;
        if (in >> v && v > 0) limit = std::min(limit, v);
    }
    for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
        rlimit r{};
        if (getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
            limit = std::min<std::uint64_t>(limit, r.rlim_cur);
    }
    return limit == UINT64_MAX ? std::uint64_t{8} << 30 : limit;
}

std::uint64_t& budget() {
    static std::uint64_t value = machine_limit() / 10 * 8;
    return value;
}

std::vector<std::string>& scopes() {
    thread_local std::vector<std::string> stack;
    return stack;
}

std::string& unwound_scope() {
    thread_local std::string what;
    return what;
}

}  // namespace

std::uint64_t memory_budget() { return budget(); }

void set_memory_budget(std::uint64_t bytes) { budget() = bytes; }

void apply_memory_limit() {
    if (address_sanitizer) return;
    rlimit r{};
    if (getrlimit(RLIMIT_DATA, &r) != 0) return;
    // Headroom above the budget for the allocator's own bookkeeping and the error path.
    const std::uint64_t want = budget() + (std::uint64_t{64} << 20);
    if (r.rlim_max != RLIM_INFINITY && want > r.rlim_max) return;
    r.rlim_cur = static_cast<rlim_t>(want);
    setrlimit(RLIMIT_DATA, &r);
}

std::string format_memory(double bytes) {
    if (bytes >= 1e12) return fmt::format("{:.1f} TB", bytes / 1e12);
    if (bytes >= 1e9) return fmt::format("{:.1f} GB", bytes / 1e9);
    return fmt::format("{:.0f} MB", bytes / 1e6);
}

void require_memory(double estimate, const std::string& what, const std::string& hint, const std::string& where_file) {
    if (estimate <= static_cast<double>(budget())) return;
    throw InputError(SourceLocation{where_file},
                     fmt::format("{} needs about {}, more than the memory budget of {} (--max-memory){}{}", what,
                                 format_memory(estimate), format_memory(static_cast<double>(budget())),
                                 hint.empty() ? "" : ": ", hint));
}

MemoryScope::MemoryScope(std::string what) : uncaught_(std::uncaught_exceptions()) {
    if (scopes().empty()) unwound_scope().clear();
    scopes().push_back(std::move(what));
}

MemoryScope::~MemoryScope() {
    if (std::uncaught_exceptions() > uncaught_ && unwound_scope().empty()) unwound_scope() = scopes().back();
    scopes().pop_back();
}

std::string memory_scope() {
    if (!unwound_scope().empty()) return unwound_scope();
    return scopes().empty() ? std::string{} : scopes().back();
}

}  // namespace clustersim::engine
