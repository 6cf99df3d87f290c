// Figures that describe a cluster: counts by kind, GPUs per node, bisection bandwidth, diameter and the route
// between the two farthest GPUs. Used by `clustersim topo describe`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/time.h"
#include "topologies/cluster.h"

namespace clustersim::topo {

struct TopologySummary {
    std::map<std::string, int> devices_by_kind;  // by kind name, sorted
    std::map<std::string, int> links_by_kind;    // directed links
    std::map<std::string, int> gpus_by_type;
    int nodes = 0;
    int gpus_per_node_min = 0;
    int gpus_per_node_max = 0;
    /// Max-flow between GPUs [0, n/2) and [n/2, n) in rank order, bytes/s one way.
    double bisection_bandwidth = 0;
    /// Longest shortest path between GPUs, in links, and the farthest pair by (latency, hops).
    int diameter_hops = 0;
    DeviceId farthest_src, farthest_dst;
    engine::Time farthest_latency{};
    std::vector<LinkId> farthest_route;
};

/// Computes the summary. Cost: one shortest-path tree per GPU and one max-flow; seconds for 10^4 GPUs.
TopologySummary summarize(const Cluster& cluster);

/// Graphviz text for `dot -Tsvg` (boost::write_graphviz): one node per device, one edge per cable or link.
std::string to_graphviz(const Cluster& cluster);

}  // namespace clustersim::topo
