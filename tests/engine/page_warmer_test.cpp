// PageWarmer: pages faulted in on another thread never change what the writer writes, and a followed array's
// pages past its end are given back when it is complete.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "engine/huge_pages.h"
#include "engine/page_warmer.h"

using namespace clustersim;

TEST_CASE("arrays written while their pages are faulted in ahead hold what was written", "[engine][memory]") {
    constexpr std::size_t n = 24'000'000;  // 96 MB of uint32: past the window, in many steps
    std::vector<std::uint32_t> followed, moved, warmed;
    engine::reserve_huge(followed, n);
    {
        engine::PageWarmer warmer;
        engine::reserve_huge_fresh(warmed, n);
        warmer.warm(warmed.data(), n * sizeof(std::uint32_t));
        warmer.follow(0, followed);
        warmer.follow(1, moved);
        for (std::uint32_t i = 0; i < n; ++i) {
            followed.push_back(i * 7);
            moved.push_back(i);  // grows by doubling: its place changes, and what was asked for the old one is dropped
            if (i % 100'000 == 0) {
                warmer.follow(0, followed);
                warmer.follow(1, moved);
            }
        }
        warmed.assign(n, 5);
        warmer.follow(0, followed);
        warmer.follow(1, moved);
    }
    for (std::uint32_t i = 0; i < n; i += 9'973) {
        REQUIRE(followed[i] == i * 7);
        REQUIRE(moved[i] == i);
        REQUIRE(warmed[i] == 5);
    }
    CHECK(followed.back() == (n - 1) * 7);
    CHECK(std::accumulate(moved.begin(), moved.end(), std::uint64_t{0}) == std::uint64_t{n} * (n - 1) / 2);
}

TEST_CASE("a followed array's next pages are faulted in, and given back past its end when the warmer finishes",
          "[engine][memory]") {
#if defined(__linux__)
    if (!engine::PageWarmer::available()) {
        WARN("no MADV_POPULATE_WRITE or one core: nothing is faulted in ahead here");
        return;
    }
    std::vector<std::uint8_t> v;
    engine::reserve_huge(v, std::size_t{256} << 20);  // 256 MB reserved, 16 MB written
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    // Past the end (but for its page), within the window.
    const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(v.data()) + (std::size_t{16} << 20)) / page * page +
                                 page,
                         end = (reinterpret_cast<std::uintptr_t>(v.data()) + (std::size_t{64} << 20)) / page * page;
    std::vector<unsigned char> state((end - begin) / page);
    const auto resident = [&] {
        REQUIRE(mincore(reinterpret_cast<void*>(begin), end - begin, state.data()) == 0);
        std::size_t count = 0;
        for (const unsigned char r : state) count += r & 1;
        return count;
    };
    auto warmer = std::make_unique<engine::PageWarmer>();
    warmer->follow(0, v);
    v.assign(std::size_t{16} << 20, 1);
    warmer->follow(0, v);  // asks for up to 64 MB past the end
    // The warmer's thread faults them in (within seconds even on a loaded machine).
    for (int wait = 0; wait < 1000 && resident() < state.size(); ++wait)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(resident() == state.size());
    warmer->finish();
    CHECK(resident() == 0);
    warmer.reset();  // (after finish: stopped already)
    CHECK(v[(std::size_t{16} << 20) - 1] == 1);
#endif
}
