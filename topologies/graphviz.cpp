// Graphviz output of a cluster through boost::write_graphviz on its adjacency_list.
#include <sstream>

#include <fmt/format.h>
#include <boost/graph/graphviz.hpp>

#include "engine/units.h"
#include "topologies/cluster_graph.h"
#include "topologies/topology_summary.h"

namespace clustersim::topo {

namespace {
const char* shape_of(DeviceKind kind) {
    switch (kind) {
        case DeviceKind::gpu:
            return "box";
        case DeviceKind::cpu:
            return "component";
        case DeviceKind::nic:
            return "cds";
        default:
            return "ellipse";
    }
}
}  // namespace

std::string to_graphviz(const Cluster& cluster) {
    std::ostringstream out;
    const auto& g = cluster.graph().graph;
    auto vertex_writer = [&](std::ostream& os, std::size_t v) {
        const Device& d = cluster.devices()[v];
        os << fmt::format("[label=\"{}\", shape={}]", d.name, shape_of(d.kind));
    };
    auto edge_writer = [&](std::ostream& os, const BoostClusterGraph::edge_descriptor& e) {
        const Link& l = cluster.link(g[e].link);
        os << fmt::format("[label=\"{} {}\"]", link_kind_name(l.kind), engine::format_rate(l.bandwidth_bytes_per_s));
    };
    auto graph_writer = [](std::ostream& os) { os << "rankdir=LR;\n"; };
    boost::write_graphviz(out, g, vertex_writer, edge_writer, graph_writer);
    return out.str();
}

}  // namespace clustersim::topo
