// Leaf-spine and rail-optimized fabrics. Each leaf's uplinks to the spines add up to its downlink bandwidth
// divided by the oversubscription ratio, split evenly over the spines (one cable per leaf-spine pair).
#include "topologies/presets/fabric.h"

#include <fmt/format.h>

#include "engine/units.h"

namespace clustersim::topo {

std::vector<engine::ParamSpec> fabric_param_specs() {
    using engine::ParamType;
    return {
        {"fabric", ParamType::string, "rail-optimized",
         "inter-node fabric: rail-optimized (NIC k of every node on leaf k), leaf-spine (alias fat-tree: all NICs "
         "of a node on one leaf), or none"},
        {"nodes_per_leaf", ParamType::integer, "32", "servers whose NICs share a leaf (a rail group)"},
        {"spines", ParamType::integer, "8", "spine switches (0: no spine layer)"},
        {"oversubscription", ParamType::number, "1", "leaf downlink to uplink bandwidth ratio, e.g. 2 for 2:1"},
        {"network_latency", ParamType::string, "",
         "latency of each network link, cable plus switch (default: the servers' fabric: InfiniBand 150 ns, "
         "Ethernet 500 ns)"},
    };
}

FabricShape fabric_shape(const engine::Params& params, const ServerShape& servers) {
    FabricShape shape;
    shape.link_kind = servers.network;
    const std::string& kind = params.string("fabric");
    if (kind == "rail-optimized")
        shape.kind = FabricKind::rail_optimized;
    else if (kind == "leaf-spine" || kind == "fat-tree")
        shape.kind = FabricKind::leaf_spine;
    else if (kind == "none")
        shape.kind = FabricKind::none;
    else
        params.fail("fabric",
                    fmt::format("unknown fabric '{}' (known: rail-optimized, leaf-spine, fat-tree, none)", kind));
    const auto per_leaf = params.integer("nodes_per_leaf");
    if (per_leaf < 1 || per_leaf > 100000) params.fail("nodes_per_leaf", "expected an integer from 1 to 100000");
    shape.nodes_per_leaf = static_cast<int>(per_leaf);
    const auto spines = params.integer("spines");
    if (spines < 0 || spines > 100000) params.fail("spines", "expected an integer from 0 to 100000");
    shape.spines = static_cast<int>(spines);
    shape.oversubscription = params.number("oversubscription");
    if (!(shape.oversubscription >= 1.0 / 64 && shape.oversubscription <= 1024))
        params.fail("oversubscription", "expected a ratio between 1/64 and 1024, e.g. 2 for 2:1");
    shape.link_latency = servers.network_latency;
    if (!params.string("network_latency").empty())
        shape.link_latency = engine::parse_time(params.string("network_latency"), params.location("network_latency"));
    return shape;
}

std::vector<DeviceId> build_fabric(Cluster& cluster, const std::vector<BuiltNode>& nodes, const FabricShape& shape,
                                   const std::string& prefix, int datacenter) {
    if (shape.kind == FabricKind::none) {
        if (nodes.size() > 1) throw engine::InputError("fabric 'none' cannot join more than one node");
        return {};
    }
    auto add_switch = [&](const std::string& name) {
        return cluster.add_device(Device{prefix + name, DeviceKind::network_switch, -1, -1, datacenter});
    };
    const int groups = static_cast<int>((nodes.size() + static_cast<std::size_t>(shape.nodes_per_leaf) - 1) /
                                        static_cast<std::size_t>(shape.nodes_per_leaf));
    std::size_t rails = 1;
    if (shape.kind == FabricKind::rail_optimized) {
        for (const BuiltNode& n : nodes) rails = std::max(rails, n.nics.size());
    }
    std::vector<DeviceId> leaves;
    std::vector<double> leaf_down_bandwidth;
    for (int g = 0; g < groups; ++g) {
        for (std::size_t r = 0; r < rails; ++r) {
            leaves.push_back(add_switch(shape.kind == FabricKind::rail_optimized ? fmt::format("leaf{}.rail{}", g, r)
                                                                                 : fmt::format("leaf{}", g)));
            leaf_down_bandwidth.push_back(0);
        }
    }
    for (std::size_t n = 0; n < nodes.size(); ++n) {
        const std::size_t group = n / static_cast<std::size_t>(shape.nodes_per_leaf);
        for (std::size_t k = 0; k < nodes[n].nics.size(); ++k) {
            const std::size_t leaf = group * rails + (shape.kind == FabricKind::rail_optimized ? k : 0);
            cluster.add_cable(nodes[n].nics[k], leaves[leaf], nodes[n].nic_bandwidth, shape.link_latency,
                              shape.link_kind);
            leaf_down_bandwidth[leaf] += nodes[n].nic_bandwidth;
        }
    }
    if (shape.spines == 0 || leaves.size() == 1) return leaves;
    std::vector<DeviceId> spines;
    for (int s = 0; s < shape.spines; ++s) spines.push_back(add_switch(fmt::format("spine{}", s)));
    for (std::size_t l = 0; l < leaves.size(); ++l) {
        const double per_spine = leaf_down_bandwidth[l] / (shape.oversubscription * shape.spines);
        for (const DeviceId s : spines) cluster.add_cable(leaves[l], s, per_spine, shape.link_latency, shape.link_kind);
    }
    return spines;
}

}  // namespace clustersim::topo
