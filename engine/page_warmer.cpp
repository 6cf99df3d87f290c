// Pages faulted in ahead of their first write, on a thread of their own (page_warmer.h).
#include "engine/page_warmer.h"

#include <algorithm>
#include <cerrno>
#include <system_error>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace clustersim::engine {

namespace {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
constexpr bool can_populate = true;
#else
constexpr bool can_populate = false;
#endif

constexpr std::uintptr_t page = 4096;
constexpr std::uintptr_t chunk = std::uintptr_t{2} << 20;  // one huge page per call: a stop is never far
/// A followed array's next range is asked for once it is this much past the last one (not on every call).
constexpr std::uintptr_t follow_step = std::uintptr_t{8} << 20;
/// Smaller ranges are left to the writer: not worth a thread (small replays, the tests, sweeps of small points).
constexpr std::uintptr_t least_range = std::uintptr_t{4} << 20;

/// Faults in [begin, end) (page-aligned) as writes would; false if the system refuses (then nothing more is tried).
bool populate(std::uintptr_t begin, std::uintptr_t end) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    // (EINVAL: a kernel before 5.14. ENOMEM: a range no longer mapped, or memory short: the writer will fault it.)
    return madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0 || errno == ENOMEM;
#else
    (void)begin;
    (void)end;
    return false;
#endif
}
}  // namespace

bool PageWarmer::available() {
    static const bool yes = can_populate && std::thread::hardware_concurrency() >= 2;
    return yes;
}

PageWarmer::~PageWarmer() { stop(); }

bool PageWarmer::stop() {
    {
        const std::lock_guard guard(lock_);
        stop_ = true;
    }
    wake_.notify_all();
    if (!thread_.joinable()) return false;
    thread_.join();
    return true;
}

void PageWarmer::finish() {
    if (!stop()) return;  // (no thread: nothing was faulted in ahead)
#if defined(__linux__)
    // (After the join: nothing faults these pages in again.)
    for (const Lane& l : lanes_) {
        const std::uintptr_t from = (l.used_end + page - 1) / page * page;
        if (l.base != 0 && l.until > from) (void)madvise(reinterpret_cast<void*>(from), l.until - from, MADV_DONTNEED);
    }
#endif
}

void PageWarmer::warm(const void* data, std::size_t bytes) {
    const auto begin = reinterpret_cast<std::uintptr_t>(data);
    enqueue({begin / page * page, (begin + bytes) / page * page, lanes, 0});
}

void PageWarmer::follow(std::size_t lane, const void* data, std::size_t used, std::size_t capacity) {
    if (!available() || lane >= lanes || data == nullptr) return;
    const auto base = reinterpret_cast<std::uintptr_t>(data);
    Range r;
    {
        const std::lock_guard guard(lock_);
        Lane& l = lanes_[lane];
        if (l.base != base) {  // new, or moved: what was asked for the old place is dropped
            l.base = base;
            l.until = 0;
            ++l.generation;
        }
        l.used_end = base + used;
        l.until = std::max(l.until, (base + used + page - 1) / page * page);  // (the writer may have overtaken it)
        const std::uintptr_t last = (base + capacity) / page * page;
        const std::uintptr_t target = std::min(last, (base + used + window_bytes) / page * page);
        // Asked for in steps, but for the last stretch up to the reservation's end.
        if (target < l.until + follow_step && !(target == last && target > l.until)) return;
        r = {l.until, target, lane, l.generation};
        l.until = target;
    }
    enqueue(r);
}

void PageWarmer::enqueue(const Range& r) {
    if (!available() || r.end < r.begin + least_range) return;
    {
        const std::lock_guard guard(lock_);
        if (stop_) return;
        ranges_.push_back(r);
        if (!started_) {
            started_ = true;
            try {
                thread_ = std::thread([this] { run(); });
            } catch (const std::system_error&) {
                stop_ = true;  // no thread: the writer faults its pages in, as without a warmer
                ranges_.clear();
                return;
            }
        }
    }
    wake_.notify_one();
}

void PageWarmer::run() {
    std::unique_lock guard(lock_);
    while (true) {
        wake_.wait(guard, [this] { return stop_ || !ranges_.empty(); });
        if (stop_) return;
        Range& r = ranges_.front();
        // A followed array that moved since: its old place is not this array's any more.
        if (r.lane < lanes && lanes_[r.lane].generation != r.generation) {
            ranges_.pop_front();
            continue;
        }
        const std::uintptr_t begin = r.begin, end = std::min(r.end, (begin / chunk + 1) * chunk);
        r.begin = end;
        if (r.begin >= r.end) ranges_.pop_front();
        guard.unlock();
        const bool ok = populate(begin, end);
        guard.lock();
        if (!ok) {
            stop_ = true;
            ranges_.clear();
            return;
        }
    }
}

}  // namespace clustersim::engine
