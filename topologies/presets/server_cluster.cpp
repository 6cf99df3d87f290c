// Presets made of identical servers joined by a fabric (dgx-a100, dgx-h100, dgx-h200, dgx1-v100, pcie-box),
// and the heterogeneous mix of several kinds.
#include <charconv>

#include <fmt/format.h>

#include "engine/split_list.h"
#include "topologies/presets/fabric.h"
#include "topologies/presets/preset_registry.h"
#include "topologies/presets/server_node.h"

namespace clustersim::topo {

namespace {
int checked_count(const engine::Params& params, const std::string& name, int max) {
    const auto v = params.integer(name);
    if (v < 1 || v > max) params.fail(name, fmt::format("expected an integer from 1 to {}, got {}", max, v));
    return static_cast<int>(v);
}
}  // namespace

Cluster build_server_cluster(const engine::Params& params) {
    const std::string kind = params.string("preset");
    const ServerShape shape = server_shape(kind, params, "preset");
    const int nodes = checked_count(params, "nodes", 1 << 16);
    const FabricShape fabric = fabric_shape(params, shape);
    if (fabric.kind == FabricKind::none && nodes > 1)
        params.fail("fabric", "fabric 'none' cannot join more than one node");
    Cluster cluster;
    std::vector<BuiltNode> built;
    for (int n = 0; n < nodes; ++n) built.push_back(build_server(cluster, shape, n, 0, fmt::format("n{}.", n)));
    build_fabric(cluster, built, fabric, "", 0);
    cluster.description = fmt::format("{} x{} ({}, {} fabric)", kind, nodes, shape.gpu, params.string("fabric"));
    return cluster;
}

Cluster build_heterogeneous(const engine::Params& params) {
    // mix: "kind:count,kind:count"
    const std::string& mix = params.string("mix");
    std::vector<std::pair<std::string, int>> groups;
    for (const std::string& item : engine::split_list(mix)) {
        const auto colon = item.find(':');
        int count = 0;
        if (colon == std::string::npos ||
            std::from_chars(item.data() + colon + 1, item.data() + item.size(), count).ec != std::errc() || count < 1)
            params.fail("mix", fmt::format("expected \"kind:count,kind:count\", got \"{}\"", mix));
        groups.emplace_back(item.substr(0, colon), count);
    }
    // The fabric is the first kind's (InfiniBand unless it is an Ethernet server kind).
    const FabricShape fabric = fabric_shape(params, server_shape(groups.front().first, params, "mix"));
    Cluster cluster;
    std::vector<BuiltNode> built;
    std::string description;
    int node = 0;
    for (const auto& [kind, count] : groups) {
        // A mix names the GPU by server kind; a "gpu" override would make the mix meaningless.
        if (!params.string("gpu").empty()) params.fail("gpu", "a heterogeneous mix takes each server's own GPU");
        const ServerShape shape = server_shape(kind, params, "mix");
        for (int i = 0; i < count; ++i, ++node)
            built.push_back(build_server(cluster, shape, node, 0, fmt::format("n{}.", node)));
        description += fmt::format("{}{} x{}", description.empty() ? "" : " + ", kind, count);
    }
    build_fabric(cluster, built, fabric, "", 0);
    cluster.description = fmt::format("heterogeneous: {} ({} fabric)", description, params.string("fabric"));
    return cluster;
}

}  // namespace clustersim::topo
