// Two-level routing towards GPUs in servers (router.h): distances through the server's entry links, from one
// Dijkstra per boundary device and a search inside the server, and next hops found where routes walk.
#include <algorithm>
#include <queue>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/memory_budget.h"
#include "topologies/router.h"

namespace clustersim::topo {

void Router::index_servers() {
    servers_indexed_ = true;
    const auto& devices = cluster_.devices();
    std::int32_t nodes = 0;
    for (const Device& d : devices) nodes = std::max(nodes, d.node + 1);
    servers_.assign(static_cast<std::size_t>(nodes), Server{});
    position_in_server_.assign(devices.size(), UINT32_MAX);
    boundary_slot_.assign(devices.size(), UINT32_MAX);
    walked_.assign(devices.size(), Walked{});
    fabric_distances_.clear();
    entry_costs_.clear();
    shared_hops_.clear();
    shared_links_.clear();
    for (std::size_t v = 0; v < devices.size(); ++v) {
        if (devices[v].node < 0) continue;
        Server& server = servers_[static_cast<std::size_t>(devices[v].node)];
        position_in_server_[v] = static_cast<std::uint32_t>(server.devices.size());
        server.devices.push_back(DeviceId::from_index(v));
    }
    fabric_only_ = true;
    for (std::size_t l = 0; l < cluster_.links().size(); ++l) {
        const Link& link = cluster_.links()[l];
        const std::int32_t from = cluster_.device(link.src).node, to = cluster_.device(link.dst).node;
        if (from == to) continue;
        if (to >= 0) servers_[static_cast<std::size_t>(to)].entries.push_back(LinkId::from_index(l));
        if (from >= 0) servers_[static_cast<std::size_t>(from)].exits.push_back(LinkId::from_index(l));
        fabric_only_ = fabric_only_ && (from < 0 || to < 0);
    }
    for (Server& server : servers_) {
        for (const LinkId l : server.entries) server.boundaries.push_back(cluster_.link(l).src.value);
        std::sort(server.boundaries.begin(), server.boundaries.end());
        server.boundaries.erase(std::unique(server.boundaries.begin(), server.boundaries.end()),
                                server.boundaries.end());
    }
    // Usable when every way in comes from a device that forwards (a GPU cabled to another server's GPU does not:
    // paths through it start there, which the formula does not cover); the few servers that are not use tables.
    for (Server& server : servers_) {
        server.usable = !server.entries.empty() &&
                        std::all_of(server.entries.begin(), server.entries.end(),
                                    [&](LinkId l) { return forwards_traffic(cluster_.device(cluster_.link(l).src)); });
    }
    if (fabric_only_) {
        build_fabric();
        index_exit_sets();
    }
}

Router::Walked* Router::walked_to(DeviceId dst) {
    if (!two_level_) return nullptr;
    if (!servers_indexed_) index_servers();
    const std::int32_t node = cluster_.device(dst).node;
    if (node < 0 || !servers_[static_cast<std::size_t>(node)].usable) return nullptr;
    Walked& w = walked_[dst.index()];
    if (w.ready) return &w;
    const Server& server = servers_[static_cast<std::size_t>(node)];
    // Distances to dst inside the server: Dijkstra over its own devices, relaying only through forwarding ones.
    w.inside.assign(server.devices.size(), unreachable);
    using Entry = std::pair<std::int64_t, std::uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> frontier;
    w.inside[position_in_server_[dst.index()]] = 0;
    frontier.emplace(0, dst.value);
    while (!frontier.empty()) {
        const auto [d, v] = frontier.top();
        frontier.pop();
        if (d != w.inside[position_in_server_[v]]) continue;
        if (v != dst.value && !forwards_traffic(cluster_.devices()[v])) continue;
        for (const LinkId l : cluster_.in_links(DeviceId{v})) {
            const Link& link = cluster_.link(l);
            if (link_down(l) || cluster_.device(link.src).node != node) continue;
            const std::int64_t candidate = d + link_cost(link);
            auto& du = w.inside[position_in_server_[link.src.index()]];
            if (candidate < du) {
                du = candidate;
                frontier.emplace(candidate, link.src.value);
            }
        }
    }
    // Through each entry b -> x: its cost and x's distance inside, when x may carry traffic on to dst.
    w.through_entry.assign(server.entries.size(), unreachable);
    w.entry_slot.assign(server.entries.size(), UINT32_MAX);
    for (std::size_t e = 0; e < server.entries.size(); ++e) {
        const Link& link = cluster_.link(server.entries[e]);
        const std::int64_t inside = w.inside[position_in_server_[link.dst.index()]];
        if (link_down(server.entries[e]) || inside == unreachable) continue;
        if (link.dst != dst && !forwards_traffic(cluster_.device(link.dst))) continue;
        w.through_entry[e] = inside + link_cost(link);
        w.entry_slot[e] = distances_to_boundary(link.src);
    }
    if (fabric_only_) {
        std::int64_t least = unreachable;
        for (const std::int64_t c : w.through_entry) least = std::min(least, c);
        std::vector<std::int64_t>& pattern = pattern_scratch_;
        pattern.clear();
        for (std::size_t e = 0; e < server.entries.size(); ++e) {
            const std::int64_t c = w.through_entry[e];
            pattern.push_back(w.entry_slot[e]);
            pattern.push_back(c == unreachable ? unreachable : c - least);
        }
        w.entry_pattern = entry_costs_.intern(pattern);
    }
    w.ready = true;
    return &w;
}

std::int64_t Router::distance(DeviceId u, DeviceId dst, const Walked& w) {
    const std::int32_t node = cluster_.device(dst).node;
    const Server& server = servers_[static_cast<std::size_t>(node)];
    std::int64_t best = cluster_.device(u).node == node ? w.inside[position_in_server_[u.index()]] : unreachable;
    if (fabric_only_ && fabric_index_[u.index()] == UINT32_MAX) {
        // Inside a server: out through one of its exits to a fabric device, then on from there. The same minimum
        // as over entries of (u to the entry's boundary device, which goes out through the exits) + the entry, in
        // the other order. The exits' distances are kept as their server's exit pattern (router_exit_patterns.cpp),
        // which every server on the same leaves shares.
        const ExitPattern out = exit_pattern(cluster_.device(u).node, dst, w);
        if (out.least == unreachable) return best;
        const std::int64_t through = through_exits(u, out.pattern);
        return through == unreachable ? best : std::min(best, out.least + through);
    }
    for (std::size_t e = 0; e < server.entries.size(); ++e) {
        if (w.through_entry[e] == unreachable) continue;
        const std::int64_t to_b = to_boundary(u, w.entry_slot[e]);
        if (to_b != unreachable) best = std::min(best, to_b + w.through_entry[e]);
    }
    return best;
}

std::int64_t Router::fabric_distance(DeviceId x, DeviceId dst, const Walked& w) {
    bool inserted = false;
    std::int64_t& kept = fabric_distances_.find_or_insert((std::uint64_t{dst.value} << 32) | x.value, inserted);
    if (inserted) kept = distance(x, dst, w);
    return kept;
}

std::pair<std::uint32_t, std::uint32_t> Router::walked_hops(DeviceId u, DeviceId dst, Walked& w) {
    const auto it = std::lower_bound(w.device.begin(), w.device.end(), u.value);
    const auto at = static_cast<std::size_t>(it - w.device.begin());
    if (it != w.device.end() && *it == u.value) return {w.first[at], w.count[at]};
    const auto first = static_cast<std::uint32_t>(w.links.size());
    const std::uint32_t count = append_next_hops(u, dst, w, w.links);
    w.device.insert(w.device.begin() + static_cast<std::ptrdiff_t>(at), u.value);
    w.first.insert(w.first.begin() + static_cast<std::ptrdiff_t>(at), first);
    w.count.insert(w.count.begin() + static_cast<std::ptrdiff_t>(at), count);
    return {first, count};
}

std::span<const LinkId> Router::shared_hops(DeviceId u, DeviceId dst, const Walked& w) {
    bool inserted = false;
    std::uint64_t& kept = shared_hops_.find_or_insert((std::uint64_t{w.entry_pattern} << 32) | u.value, inserted);
    if (inserted) {
        const auto first = static_cast<std::uint32_t>(shared_links_.size());
        kept = (std::uint64_t{first} << 32) | append_next_hops(u, dst, w, shared_links_);
    }
    return {shared_links_.data() + (kept >> 32), static_cast<std::size_t>(kept & UINT32_MAX)};
}

std::uint32_t Router::append_next_hops(DeviceId u, DeviceId dst, const Walked& w, std::vector<LinkId>& links) {
    // The out-links to a device that carries traffic on (or is dst) whose distance plus the link's cost is least:
    // the same test, in the same link order, as the tables' (router.cpp).
    std::int64_t best = unreachable;
    const std::size_t first = links.size();
    for (const LinkId l : cluster_.out_links(u)) {
        if (link_down(l)) continue;
        const Link& link = cluster_.link(l);
        if (link.dst != dst && !forwards_traffic(cluster_.device(link.dst))) continue;
        const std::int64_t d = distance(link.dst, dst, w);
        if (d == unreachable) continue;
        const std::int64_t via = d + link_cost(link);
        if (via < best) {
            best = via;
            links.resize(first);
        }
        if (via == best) links.push_back(l);
    }
    return static_cast<std::uint32_t>(links.size() - first);
}

}  // namespace clustersim::topo
