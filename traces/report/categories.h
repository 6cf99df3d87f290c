// The categories a rank's iteration is partitioned into, in one order and one colour each, for every plot of the
// report and the terminal table (whose columns follow the same order).
#pragma once

#include <algorithm>
#include <array>
#include <string_view>

#include "engine/time.h"
#include "traces/run_summary.h"

namespace clustersim::traces::report {

struct Category {
    std::string_view name;
    std::string_view colour;
};

/// The partition of an iteration: each instant of a rank in exactly one of these.
inline constexpr std::array<Category, 8> partition_categories = {{
    {"compute", "#4c78a8"},                // compute, no transfer of the rank at the same time
    {"overlap", "#72b7b2"},                // compute with a transfer beside it
    {"exposed communication", "#f58518"},  // a transfer and no compute, not slowed by contention
    {"network wait", "#e45756"},           // the part of exposed communication lost to contention
    {"peer wait", "#b279a2"},              // in a collective, waiting for its members
    {"bubble", "#9d755d"},                 // in a send/recv waiting for the peer (pipeline bubble)
    {"finished early", "#bab0ac"},         // done while other ranks still run
    {"other", "#eeca3b"},                  // host gaps, local dependencies
}};
/// Colours of the critical path's categories: the same hues for compute and waiting, and one for copies.
inline constexpr std::string_view copies_colour = "#54a24b";

/// A rank's iteration by partition_categories, in picoseconds; the parts add up to the iteration.
inline std::array<engine::Time, partition_categories.size()> partition(const RankBreakdown& r) {
    return {r.compute - r.overlap, r.overlap,   r.exposed_communication - r.network_wait,
            r.network_wait,        r.peer_wait, r.dependency_wait,
            r.finished_early,      r.idle_other};
}

/// Each partition category's mean and largest over a run's ranks, in picoseconds (the report's what-if table and
/// `compare`).
struct PartitionStats {
    std::array<double, partition_categories.size()> mean{}, largest{};
};
inline PartitionStats partition_stats(const RunSummary& s) {
    PartitionStats out;
    for (const RankBreakdown& r : s.ranks) {
        const auto parts = partition(r);
        for (std::size_t k = 0; k < parts.size(); ++k) {
            out.mean[k] += static_cast<double>(parts[k].count());
            out.largest[k] = std::max(out.largest[k], static_cast<double>(parts[k].count()));
        }
    }
    for (double& v : out.mean) v /= static_cast<double>(std::max<std::size_t>(1, s.ranks.size()));
    return out;
}

}  // namespace clustersim::traces::report
