// Dijkstra from each destination over the reversed graph, and the ECMP walk forward along equal-cost hops.
#include "topologies/router.h"

#include <fmt/format.h>

#include <queue>
#include <unordered_map>

#include "engine/error.h"
#include "engine/hash.h"
#include "engine/memory_budget.h"

namespace clustersim::topo {

Router::Router(const Cluster& cluster) : cluster_(cluster), next_hop_cache_(cluster.devices().size()) {}

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
            if (link_down(l)) continue;
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
    // The tables are the router's memory: one per destination, 4 bytes per device and per next hop. Past half
    // the memory budget they are refused with what they need, not grown until the machine runs out.
    const double table_bytes = 4.0 * static_cast<double>(cluster_.devices().size() + cluster_.links().size() + 1);
    if (table_bytes * static_cast<double>(tables_ + 1) > static_cast<double>(engine::memory_budget()) / 2)
        throw engine::InputError(fmt::format(
            "routing to {} destinations of {} devices needs about {} of tables: beyond half the memory budget of {} "
            "(--max-memory); fewer GPUs, or a larger budget",
            tables_ + 1, cluster_.devices().size(), engine::format_memory(table_bytes * (tables_ + 1)),
            engine::format_memory(static_cast<double>(engine::memory_budget()))));
    ++tables_;
    compute_distances_to(dst, scratch_);
    const auto& dist = scratch_;
    const std::size_t n = cluster_.devices().size();
    hops.offsets.assign(n + 1, 0);
    for (std::size_t u = 0; u < n; ++u) {
        hops.offsets[u] = static_cast<std::uint32_t>(hops.links.size());
        if (dist[u] == unreachable || u == dst.index()) continue;
        for (const LinkId l : cluster_.out_links(DeviceId::from_index(u))) {
            if (link_down(l)) continue;
            const Link& link = cluster_.link(l);
            const bool relays = link.dst == dst || forwards_traffic(cluster_.device(link.dst));
            if (relays && dist[link.dst.index()] != unreachable && dist[link.dst.index()] + link_cost(link) == dist[u])
                hops.links.push_back(l);
        }
    }
    hops.offsets[n] = static_cast<std::uint32_t>(hops.links.size());
    return hops;
}

void Router::set_link_down(LinkId link, bool down) {
    if (down_.empty()) down_.assign(cluster_.links().size(), 0);
    if ((down_[link.index()] != 0) == down) return;
    down_[link.index()] = down ? 1 : 0;
    links_down_ = down ? links_down_ + 1 : links_down_ - 1;
    for (NextHops& hops : next_hop_cache_) {
        std::vector<std::uint32_t>().swap(hops.offsets);
        std::vector<LinkId>().swap(hops.links);
    }
    tables_ = 0;
    // Two-level state, the fabric graph included: rebuilt on next use, without the links that are down.
    servers_indexed_ = false;
    boundary_distances_.clear();
}

bool Router::route(DeviceId src, DeviceId dst, std::uint64_t flow_key, std::vector<LinkId>& out) {
    if (src == dst) return false;
    // Next hops at a device: two-level where the destination's server allows it, else the destination's table.
    Walked* w = walked_to(dst);
    const NextHops* table = w ? nullptr : &next_hops_to(dst);
    PatternMemo memo;
    const auto hops_at = [&](DeviceId at) -> std::span<const LinkId> {
        if (w) return next_hops(at, dst, *w, memo);
        const std::uint32_t first = table->offsets[at.index()];
        return {table->links.data() + first, table->offsets[at.index() + 1] - first};
    };
    if (hops_at(src).empty()) {  // no next hop: unreachable
        throw engine::InputError(fmt::format("no route from '{}' to '{}' in the topology", cluster_.device(src).name,
                                             cluster_.device(dst).name));
    }
    bool multipath = false;
    DeviceId at = src;
    while (at != dst) {
        const std::span<const LinkId> hops = hops_at(at);  // (valid until the next lookup)
        const std::size_t count = hops.size();
        CLUSTERSIM_CHECK(count > 0, "routing broken at '{}'", cluster_.device(at).name);
        multipath = multipath || count > 1;
        const std::size_t pick = count == 1 ? 0 : (flow_key + engine::splitmix64(at.value)) % count;
        const LinkId l = hops[pick];
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
    engine::Time sum{0};
    for (const LinkId l : route(src, dst, 0)) sum += cluster_.link(l).latency;  // every equal-cost path: the same
    return sum;
}

std::optional<int> Router::path_hops(DeviceId src, DeviceId dst) {
    if (src == dst) return 0;
    if (Walked* w = walked_to(dst)) {
        PatternMemo memo;
        if (next_hops(src, dst, *w, memo).empty()) return std::nullopt;
        return static_cast<int>(route(src, dst, 0).size());
    }
    const NextHops& hops = next_hops_to(dst);
    if (hops.offsets[src.index()] == hops.offsets[src.index() + 1]) return std::nullopt;
    return static_cast<int>(route(src, dst, 0).size());
}

DeviceId Router::nearest_in_node(DeviceId from, DeviceKind kind) const {
    // Dijkstra towards `from` over the reversed links, within its node, relaying only through forwarding devices.
    const int node = cluster_.device(from).node;
    std::unordered_map<std::uint32_t, std::int64_t> dist{{from.value, 0}};  // only the node's devices get entries
    using Entry = std::pair<std::int64_t, std::uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> frontier;
    frontier.emplace(0, from.value);
    DeviceId best;
    std::int64_t best_cost = unreachable;
    while (!frontier.empty()) {
        const auto [d, v] = frontier.top();
        frontier.pop();
        if (d != dist.at(v) || d > best_cost) continue;
        const DeviceId at{v};
        const Device& device = cluster_.device(at);
        if (device.kind == kind && at != from && (d < best_cost || (d == best_cost && at.value < best.value))) {
            best = at;
            best_cost = d;
        }
        if (at != from && !forwards_traffic(device)) continue;
        for (const LinkId l : cluster_.in_links(at)) {
            const Link& link = cluster_.link(l);
            if (cluster_.device(link.src).node != node) continue;
            const std::int64_t candidate = d + link_cost(link);
            const auto [it, added] = dist.try_emplace(link.src.value, candidate);
            if (!added) {
                if (it->second <= candidate) continue;
                it->second = candidate;
            }
            frontier.emplace(candidate, link.src.value);
        }
    }
    return best;
}

}  // namespace clustersim::topo
