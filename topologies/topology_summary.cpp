// Summary figures of a cluster. Bisection bandwidth uses Boost's push-relabel max-flow between the first and
// second halves of the GPUs in rank order (the split that matters for data-parallel traffic between node halves).
#include "topologies/topology_summary.h"

#include <algorithm>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include "topologies/router.h"

namespace clustersim::topo {

namespace {

double bisection(const Cluster& cluster) {
    using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
    using Graph = boost::adjacency_list<
        boost::vecS, boost::vecS, boost::directedS, boost::no_property,
        boost::property<boost::edge_capacity_t, double,
                        boost::property<boost::edge_residual_capacity_t, double,
                                        boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
    const auto& gpus = cluster.gpus();
    if (gpus.size() < 2) return 0;
    const std::size_t n = cluster.devices().size();
    Graph g(n + 2);
    auto capacity = boost::get(boost::edge_capacity, g);
    auto reverse = boost::get(boost::edge_reverse, g);
    auto add = [&](std::size_t a, std::size_t b, double cap) {
        const auto e = boost::add_edge(a, b, g).first;
        const auto r = boost::add_edge(b, a, g).first;
        capacity[e] = cap;
        capacity[r] = 0;
        reverse[e] = r;
        reverse[r] = e;
    };
    double total_link = 0;
    for (const Link& l : cluster.links()) {
        // GPUs relay nothing in routing, and need no special case here: every GPU is a source or a sink with
        // unlimited capacity, so relaying through one never raises the flow.
        add(l.src.index(), l.dst.index(), l.bandwidth_bytes_per_s);
        total_link += l.bandwidth_bytes_per_s;
    }
    const std::size_t source = n, sink = n + 1;
    for (std::size_t i = 0; i < gpus.size(); ++i)
        add(i < gpus.size() / 2 ? source : gpus[i].index(), i < gpus.size() / 2 ? gpus[i].index() : sink, total_link);
    return boost::push_relabel_max_flow(g, source, sink);
}

}  // namespace

TopologySummary summarize(const Cluster& cluster) {
    TopologySummary s;
    for (const Device& d : cluster.devices()) ++s.devices_by_kind[device_kind_name(d.kind)];
    for (const Link& l : cluster.links()) ++s.links_by_kind[link_kind_name(l.kind)];
    std::map<int, int> per_node;
    for (const DeviceId g : cluster.gpus()) {
        ++s.gpus_by_type[cluster.gpu_spec(g).name];
        ++per_node[cluster.device(g).node];
    }
    s.nodes = static_cast<int>(per_node.size());
    s.gpus_per_node_min = INT32_MAX;
    for (const auto& [node, count] : per_node) {
        s.gpus_per_node_min = std::min(s.gpus_per_node_min, count);
        s.gpus_per_node_max = std::max(s.gpus_per_node_max, count);
    }
    if (per_node.empty()) s.gpus_per_node_min = 0;
    s.bisection_bandwidth = bisection(cluster);

    Router router(cluster);
    std::int64_t worst = -1;
    const auto& gpus = cluster.gpus();
    std::vector<DeviceId> destinations;
    // Every GPU as a destination while that stays within about 2e7 device visits, else at least 16.
    const std::size_t affordable =
        std::max<std::size_t>(16, 20'000'000 / std::max<std::size_t>(1, cluster.devices().size()));
    if (gpus.size() <= affordable) {
        destinations = gpus;
    } else {
        // The first and last node's GPUs (the ends of the fabric in rank order) and an even stride through the rest.
        const int first_node = cluster.device(gpus.front()).node, last_node = cluster.device(gpus.back()).node;
        std::vector<std::uint8_t> taken(gpus.size(), 0);
        for (std::size_t i = 0; i < gpus.size(); ++i) {
            const int node = cluster.device(gpus[i]).node;
            taken[i] = node == first_node || node == last_node;
        }
        const std::size_t stride = std::max<std::size_t>(1, gpus.size() / affordable);
        for (std::size_t i = 0; i < gpus.size(); i += stride) taken[i] = 1;
        for (std::size_t i = 0; i < gpus.size(); ++i)
            if (taken[i]) destinations.push_back(gpus[i]);
    }
    s.diameter_destinations = destinations.size();
    std::vector<std::int64_t> dist;
    for (const DeviceId dst : destinations) {
        router.compute_distances_to(dst, dist);
        for (const DeviceId src : gpus) {
            const std::int64_t d = dist[src.index()];
            if (src == dst || d == Router::unreachable) continue;
            s.diameter_hops = std::max(s.diameter_hops, static_cast<int>(d % 65536));
            if (d > worst) {
                worst = d;
                s.farthest_src = src;
                s.farthest_dst = dst;
            }
        }
    }
    if (worst >= 0) {
        s.farthest_latency = engine::Time{worst / 65536};
        s.farthest_route = router.route(s.farthest_src, s.farthest_dst, 0);
    }
    return s;
}

}  // namespace clustersim::topo
