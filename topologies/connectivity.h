// Checks that a cluster can carry traffic: link rates and latencies a run can represent, and every GPU able to
// send to every other: a topology that cannot carry traffic between some
// pair (no spine layer for many leaves, a one-way cable) is an input error at load, not a "no route" later.
#pragma once

#include "engine/error.h"
#include "topologies/cluster.h"

namespace clustersim::topo {

/// Throws an InputError at `where` naming a GPU that cannot reach another, or be reached.
void check_gpus_connected(const Cluster& cluster, const engine::SourceLocation& where);

/// Throws an InputError at `where` naming a link whose bandwidth is outside 1 kB/s to 1 PB/s or whose latency
/// exceeds 10 s: beyond those a run's times could not be represented (53 days of picoseconds).
void check_link_ranges(const Cluster& cluster, const engine::SourceLocation& where);

}  // namespace clustersim::topo
