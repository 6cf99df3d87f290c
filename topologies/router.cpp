// Dijkstra from each destination over the reversed graph, and the ECMP walk forward along equal-cost hops.
#include "topologies/router.h"

#include <fmt/format.h>

#include <queue>

#include "engine/error.h"
#include "engine/hash.h"

namespace clustersim::topo {

Router::Router(const Cluster& cluster)
    : cluster_(cluster), distance_cache_(cluster.devices().size()), next_hop_cache_(cluster.devices().size()) {}

const std::vector<std::int64_t>& Router::distances_to(DeviceId dst) {
    auto& dist = distance_cache_[dst.index()];
    if (dist.empty()) compute_distances_to(dst, dist);
    return dist;
}

void Router::compute_distances_to(DeviceId dst, std::vector<std::int64_t>& dist) const {
    dist.assign(cluster_.devices().size(), unreachable);
    using Entry = std::pair<std::int64_t, std::uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> frontier;
    dist[dst.index()] = 0;
    frontier.emplace(0, dst.value);
    while (!frontier.empty()) {
        const auto [d, v] = frontier.top();
        frontier.pop();
        if (d != dist[v]) continue;
        // A device other than the destination relays traffic only if its kind forwards.
        if (v != dst.value && !forwards_traffic(cluster_.devices()[v])) continue;
        for (const LinkId l : cluster_.in_links(DeviceId{v})) {
            const Link& link = cluster_.link(l);
            const std::int64_t candidate = d + link_cost(link);
            auto& du = dist[link.src.index()];
            if (candidate < du) {
                du = candidate;
                frontier.emplace(candidate, link.src.value);
            }
        }
    }
}

const Router::NextHops& Router::next_hops_to(DeviceId dst) {
    NextHops& hops = next_hop_cache_[dst.index()];
    if (!hops.offsets.empty()) return hops;
    const auto& dist = distances_to(dst);
    const std::size_t n = cluster_.devices().size();
    hops.offsets.assign(n + 1, 0);
    for (std::size_t u = 0; u < n; ++u) {
        hops.offsets[u] = static_cast<std::uint32_t>(hops.links.size());
        if (dist[u] == unreachable || u == dst.index()) continue;
        for (const LinkId l : cluster_.out_links(DeviceId::from_index(u))) {
            const Link& link = cluster_.link(l);
            const bool relays = link.dst == dst || forwards_traffic(cluster_.device(link.dst));
            if (relays && dist[link.dst.index()] != unreachable && dist[link.dst.index()] + link_cost(link) == dist[u])
                hops.links.push_back(l);
        }
    }
    hops.offsets[n] = static_cast<std::uint32_t>(hops.links.size());
    return hops;
}

bool Router::route(DeviceId src, DeviceId dst, std::uint64_t flow_key, std::vector<LinkId>& out) {
    if (src == dst) return false;
    if (distances_to(dst)[src.index()] == unreachable) {
        throw engine::InputError(fmt::format("no route from '{}' to '{}' in the topology", cluster_.device(src).name,
                                             cluster_.device(dst).name));
    }
    const NextHops& hops = next_hops_to(dst);
    bool multipath = false;
    DeviceId at = src;
    while (at != dst) {
        const std::uint32_t first = hops.offsets[at.index()];
        const std::uint32_t count = hops.offsets[at.index() + 1] - first;
        CLUSTERSIM_CHECK(count > 0, "routing table broken at '{}'", cluster_.device(at).name);
        multipath = multipath || count > 1;
        const std::uint32_t pick =
            count == 1 ? 0 : static_cast<std::uint32_t>((flow_key + engine::splitmix64(at.value)) % count);
        const LinkId l = hops.links[first + pick];
        out.push_back(l);
        at = cluster_.link(l).dst;
    }
    return multipath;
}

std::vector<LinkId> Router::route(DeviceId src, DeviceId dst, std::uint64_t flow_key) {
    std::vector<LinkId> out;
    route(src, dst, flow_key, out);
    return out;
}

engine::Time Router::path_latency(DeviceId src, DeviceId dst) {
    const std::int64_t d = distances_to(dst)[src.index()];
    CLUSTERSIM_CHECK(d != unreachable, "no path");
    return engine::Time{d / 65536};
}

std::optional<int> Router::path_hops(DeviceId src, DeviceId dst) {
    const std::int64_t d = distances_to(dst)[src.index()];
    if (d == unreachable) return std::nullopt;
    return static_cast<int>(d % 65536);
}

}  // namespace clustersim::topo
