// Peak resident memory of this process, for the benchmarks' memory columns.
#pragma once

#include "engine/phase_timer.h"

namespace clustersim::bench {

/// Peak resident set size so far, in KiB (engine::peak_resident_bytes, which `-v` prints per phase).
inline long peak_rss_kib() { return static_cast<long>(engine::peak_resident_bytes() / 1024); }

}  // namespace clustersim::bench
