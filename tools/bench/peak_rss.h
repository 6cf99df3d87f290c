// Peak resident memory of this process, for the benchmarks' memory columns.
#pragma once

#include <sys/resource.h>

namespace clustersim::bench {

/// Peak resident set size so far, in KiB (getrusage's ru_maxrss on Linux).
inline long peak_rss_kib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

}  // namespace clustersim::bench
