// Several datacenters, each a fabric of identical servers, joined by WAN links. Every datacenter has a gateway
// switch cabled to each of its spines (or leaves) at the WAN bandwidth; gateways are joined pairwise by WAN links
// of millisecond-scale latency.
#include <fmt/format.h>

#include "topologies/presets/fabric.h"
#include "topologies/presets/preset_registry.h"
#include "topologies/presets/server_node.h"

namespace clustersim::topo {

Cluster build_multi_dc(const engine::Params& params) {
    const auto dcs = params.integer("datacenters");
    if (dcs < 1 || dcs > 64) params.fail("datacenters", "expected an integer from 1 to 64");
    const auto nodes = params.integer("nodes_per_dc");
    if (nodes < 1 || nodes > (1 << 16)) params.fail("nodes_per_dc", "expected an integer from 1 to 65536");
    if (dcs * nodes > (1 << 16))
        params.fail("nodes_per_dc", fmt::format("{} datacenters x {} servers: expected at most 65536 servers in all "
                                                "(as in one datacenter)",
                                                dcs, nodes));
    const ServerShape shape = server_shape(params.string("node"), params, "node");
    const FabricShape fabric = fabric_shape(params, shape);
    if (fabric.kind == FabricKind::none) params.fail("fabric", "multi-dc needs a fabric in each datacenter");
    const double wan_bandwidth = params.rate("wan_bandwidth");
    const engine::Time wan_latency = params.time("wan_latency");

    Cluster cluster;
    std::vector<DeviceId> gateways;
    int node = 0;
    for (int dc = 0; dc < static_cast<int>(dcs); ++dc) {
        std::vector<BuiltNode> built;
        for (int n = 0; n < static_cast<int>(nodes); ++n, ++node)
            built.push_back(build_server(cluster, shape, node, dc, fmt::format("dc{}.n{}.", dc, n)));
        const auto top = build_fabric(cluster, built, fabric, fmt::format("dc{}.", dc), dc);
        gateways.push_back(
            cluster.add_device(Device{fmt::format("dc{}.gateway", dc), DeviceKind::network_switch, -1, -1, dc}));
        for (const DeviceId t : top)
            cluster.add_cable(t, gateways.back(), wan_bandwidth, fabric.link_latency, fabric.link_kind);
    }
    for (std::size_t a = 0; a < gateways.size(); ++a) {
        for (std::size_t b = a + 1; b < gateways.size(); ++b)
            cluster.add_cable(gateways[a], gateways[b], wan_bandwidth, wan_latency, LinkKind::wan);
    }
    cluster.description = fmt::format("multi-dc: {} datacenters x {} {} servers, WAN {} / {}", dcs, nodes,
                                      params.string("node"), params.text("wan_bandwidth"), params.text("wan_latency"));
    return cluster;
}

}  // namespace clustersim::topo
