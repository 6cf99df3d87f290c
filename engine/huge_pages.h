// Large arrays backed by transparent huge pages. An array of hundreds of megabytes (a graph's ops, the replay's
// per-op state) is otherwise faulted in 4 KiB page by page as it is first written: a million faults per 4 GB, each
// costing about a microsecond more on a virtual machine, where they were a fifth of an unfolded 35 M-op run (the
// kernel's fault handling under `perf`). Linux's madvise(MADV_HUGEPAGE) asks for 2 MiB pages on the whole pages of a
// range when the system's transparent huge pages are `madvise` (Debian's default) or `always`; elsewhere it does
// nothing. Only memory use changes, never a result.
#pragma once

#include <cstddef>
#include <vector>

namespace clustersim::engine {

/// Asks for huge pages on the whole 2 MiB pages inside [data, data + bytes); ranges under 4 MiB are left alone.
void advise_huge_pages(const void* data, std::size_t bytes);

/// Reserves room for `n` elements (nothing is written yet) and asks for huge pages on it: call before filling.
template <class T, class A>
void reserve_huge(std::vector<T, A>& v, std::size_t n) {
    v.reserve(n);
    advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

/// Room for `n` elements in `v`, on huge pages if it has to be allocated (what `v` held is dropped then).
template <class T, class A>
void reserve_huge_fresh(std::vector<T, A>& v, std::size_t n) {
    if (v.capacity() < n) {
        std::vector<T, A>().swap(v);
        reserve_huge(v, n);
    }
}

/// `v` as `n` copies of `value`, on huge pages where the system gives them.
template <class T, class A>
void assign_huge(std::vector<T, A>& v, std::size_t n, const T& value) {
    reserve_huge_fresh(v, n);
    v.assign(n, value);
}

}  // namespace clustersim::engine
