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
    /// Longest shortest path between GPUs, in links, and the farthest pair by (latency, hops): over every GPU as
    /// the destination while that stays within about 2e7 device visits, else over `diameter_destinations` of them
    /// (the first and last node's GPUs and an even stride through the others).
    int diameter_hops = 0;
    std::size_t diameter_destinations = 0;
    DeviceId farthest_src, farthest_dst;
    engine::Time farthest_latency{};
    std::vector<LinkId> farthest_route;
};

/// Computes the summary. Cost: shortest-path trees over about 2e7 device visits in all, and one max-flow.
TopologySummary summarize(const Cluster& cluster);

/// Graphviz text for `dot -Tsvg` (boost::write_graphviz): one node per device, one edge per cable or link.
std::string to_graphviz(const Cluster& cluster);

}  // namespace clustersim::topo
