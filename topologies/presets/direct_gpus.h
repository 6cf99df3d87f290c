// Shared by the switchless presets (ring, torus): GPUs wired directly to each other, one per node.
#pragma once

#include <vector>

#include "engine/params.h"
#include "topologies/cluster.h"

namespace clustersim::topo {

/// Adds `count` GPUs of the "gpu" parameter's type, each its own node, named gpu0, gpu1, ..., relaying traffic.
std::vector<DeviceId> add_direct_gpus(Cluster& cluster, const engine::Params& params, int count);

}  // namespace clustersim::topo
