// Transparent huge pages for large arrays (huge_pages.h).
#include "engine/huge_pages.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace clustersim::engine {

void advise_huge_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
    if (data == nullptr || bytes < 2 * huge) return;
    const auto begin = reinterpret_cast<std::uintptr_t>(data);
    const std::uintptr_t first = (begin + huge - 1) & ~(huge - 1), last = (begin + bytes) & ~(huge - 1);
    if (last <= first) return;
    // Advice only: a kernel without transparent huge pages refuses it, and the memory stays as it was.
    (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
    (void)data;
    (void)bytes;
#endif
}

}  // namespace clustersim::engine
