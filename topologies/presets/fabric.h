// Inter-node fabrics: two-level leaf-spine (fat-tree) and rail-optimized, with an oversubscription ratio.
#pragma once

#include <string>
#include <vector>

#include "engine/params.h"
#include "topologies/presets/server_node.h"

namespace clustersim::topo {

enum class FabricKind { none, leaf_spine, rail_optimized };

struct FabricShape {
    FabricKind kind = FabricKind::rail_optimized;
    int nodes_per_leaf = 32;  // leaf-spine: all NICs of these nodes on one leaf; rail-optimized: NIC k of
                              // these nodes on the group's leaf k
    int spines = 8;
    double oversubscription = 1.0;  // leaf downlink bandwidth / uplink bandwidth
    engine::Time link_latency{};    // per network link (cable + switch)
    LinkKind link_kind = LinkKind::infiniband;
};

/// Joins the nodes' NICs into a fabric. Returns the top-level switches (spines; the leaves if there are no
/// spines) for a caller that links several fabrics (multi-dc).
std::vector<DeviceId> build_fabric(Cluster& cluster, const std::vector<BuiltNode>& nodes, const FabricShape& shape,
                                   const std::string& prefix, int datacenter);

/// Parameter specs of a fabric: fabric, nodes_per_leaf, spines, oversubscription, network_latency.
std::vector<engine::ParamSpec> fabric_param_specs();
/// Decodes them for a fabric joining servers of shape `servers` (its link kind and default latency); throws
/// located errors.
FabricShape fabric_shape(const engine::Params& params, const ServerShape& servers);

}  // namespace clustersim::topo
