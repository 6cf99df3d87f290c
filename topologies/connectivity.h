// Checks that every GPU of a cluster can send to every other: a topology that cannot carry traffic between some
// pair (no spine layer for many leaves, a one-way cable) is an input error at load, not a "no route" later.
#pragma once

#include "engine/error.h"
#include "topologies/cluster.h"

namespace clustersim::topo {

/// Throws an InputError at `where` naming a GPU that cannot reach another, or be reached.
void check_gpus_connected(const Cluster& cluster, const engine::SourceLocation& where);

}  // namespace clustersim::topo
