// Pages of large arrays faulted in on a thread of their own, ahead of their first write. On a virtual machine the
// first touch of memory is slow (the kernel zeroes each page, and the host backs it: about 2.5 s per GB measured on
// the project's build machine when its memory had gone unused, 0.3 s once warm), and an unfolded plan writes
// gigabytes of ops and per-op state. A second thread that faults the next pages in while the main one fills the
// ones before moves that work off the simulation's thread. Linux's madvise(MADV_POPULATE_WRITE) (5.14 and later)
// faults pages in as a write would, without writing: the contents stay as they are, so what the main thread writes
// meanwhile is kept, and no result can change. Elsewhere, on one core, or on an older kernel, nothing is done.
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace clustersim::engine {

class PageWarmer {
public:
    /// Arrays followed at once (see follow).
    static constexpr std::size_t lanes = 4;
    /// How far ahead of a followed array's end its pages are faulted in: what may be committed and never written.
    static constexpr std::size_t window_bytes = std::size_t{64} << 20;

    PageWarmer() = default;
    PageWarmer(const PageWarmer&) = delete;
    PageWarmer& operator=(const PageWarmer&) = delete;
    /// Stops the thread (within one chunk of a range) and waits for it.
    ~PageWarmer();

    /// Whether this system can fault pages in ahead (Linux with MADV_POPULATE_WRITE, two cores or more).
    [[nodiscard]] static bool available();

    /// Faults in [data, data + bytes), a range that will be written whole soon, after the ranges asked for before.
    void warm(const void* data, std::size_t bytes);

    /// A growing array (lane < lanes), reserved at [data, data + capacity) with `used` bytes written: its pages up
    /// to `window_bytes` past the end are faulted in. Call as it grows; a new `data` (the array moved) starts over.
    void follow(std::size_t lane, const void* data, std::size_t used, std::size_t capacity);
    template <class T, class A>
    void follow(std::size_t lane, const std::vector<T, A>& v) {
        follow(lane, v.data(), v.size() * sizeof(T), v.capacity() * sizeof(T));
    }

    /// Call once the followed arrays are complete, their last follow() having reported their final sizes (nothing
    /// may be written past those ends after it): stops the thread and gives back the pages faulted in past each end,
    /// which were never written (up to `window_bytes` per array, otherwise committed for nothing).
    void finish();

private:
    struct Range {
        std::uintptr_t begin = 0, end = 0;
        std::size_t lane = lanes;  // a followed array's ranges are dropped once it moves
        std::uint64_t generation = 0;
    };
    struct Lane {
        std::uintptr_t base = 0, until = 0;  // faulted in (or asked for) below `until`
        std::uintptr_t used_end = 0;         // the end of what the writer had written, as last reported
        std::uint64_t generation = 0;
    };
    void enqueue(const Range& r);
    void run();
    /// Stops the thread (within one chunk) and waits for it; true if there was one.
    bool stop();

    std::mutex lock_;
    std::condition_variable wake_;
    std::deque<Range> ranges_;
    std::array<Lane, lanes> lanes_{};
    bool stop_ = false;
    bool started_ = false;
    std::thread thread_;
};

}  // namespace clustersim::engine
