// Distances to the boundary devices of servers (router.h). Where every link between servers has a fabric device
// at one end (switches outside servers: the presets' leaves and spines), they are searched on the fabric graph:
// the fabric's devices and links, plus one link per pair of fabric devices that a server joins, costing the
// cheapest crossing (in over an entry, through the server's forwarding devices, out over an exit). A device in a
// server reaches a fabric device by leaving through one of its exits, so its distance is the least of (cost to
// leave through exit k) + (the exit's far end's distance) over its exits. The fabric graph has the switches as
// devices, not the GPUs and NICs, so a search costs switches, not the cluster's size. Otherwise (servers cabled to
// one another) each search covers every device.
#include <algorithm>
#include <queue>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/memory_budget.h"
#include "topologies/router.h"

namespace clustersim::topo {

void Router::compute_exits(Server& server) {
    const std::size_t n = server.devices.size(), exits = server.exits.size();
    server.to_exit.assign(n * exits, unreachable);
    const std::int32_t node = cluster_.device(server.devices.front()).node;
    std::vector<std::int64_t> dist(n);
    using Entry = std::pair<std::int64_t, std::uint32_t>;
    for (std::size_t k = 0; k < exits; ++k) {
        const Link& exit = cluster_.link(server.exits[k]);
        if (link_down(server.exits[k])) continue;
        // Backwards inside the server from the exit's device, which relays (as every device but the start must)
        // only if it forwards.
        std::fill(dist.begin(), dist.end(), unreachable);
        std::priority_queue<Entry, std::vector<Entry>, std::greater<>> frontier;
        dist[position_in_server_[exit.src.index()]] = link_cost(exit);
        frontier.emplace(link_cost(exit), exit.src.value);
        while (!frontier.empty()) {
            const auto [d, v] = frontier.top();
            frontier.pop();
            if (d != dist[position_in_server_[v]] || !forwards_traffic(cluster_.devices()[v])) continue;
            for (const LinkId l : cluster_.in_links(DeviceId{v})) {
                const Link& link = cluster_.link(l);
                if (link_down(l) || cluster_.device(link.src).node != node) continue;
                const std::int64_t candidate = d + link_cost(link);
                auto& du = dist[position_in_server_[link.src.index()]];
                if (candidate < du) {
                    du = candidate;
                    frontier.emplace(candidate, link.src.value);
                }
            }
        }
        for (std::size_t u = 0; u < n; ++u) server.to_exit[u * exits + k] = dist[u];
    }
}

void Router::build_fabric() {
    const auto& devices = cluster_.devices();
    fabric_index_.assign(devices.size(), UINT32_MAX);
    fabric_devices_.clear();
    for (std::size_t v = 0; v < devices.size(); ++v) {
        if (devices[v].node >= 0) continue;
        fabric_index_[v] = static_cast<std::uint32_t>(fabric_devices_.size());
        fabric_devices_.push_back(DeviceId::from_index(v));
    }
    // Edges (from, to, cost) between fabric devices: their own links, and the cheapest crossing of each server
    // from an entry's far end to an exit's, through an entry device that forwards.
    struct Edge {
        std::uint32_t from, to;
        std::int64_t cost;
    };
    std::vector<Edge> edges;
    for (std::size_t l = 0; l < cluster_.links().size(); ++l) {
        const Link& link = cluster_.links()[l];
        if (devices[link.src.index()].node < 0 && devices[link.dst.index()].node < 0 &&
            !link_down(LinkId::from_index(l)))
            edges.push_back({fabric_index_[link.src.index()], fabric_index_[link.dst.index()], link_cost(link)});
    }
    for (Server& server : servers_) {
        if (server.devices.empty()) continue;
        compute_exits(server);
        const std::size_t exits = server.exits.size();
        for (const LinkId e : server.entries) {
            const Link& entry = cluster_.link(e);
            if (link_down(e) || !forwards_traffic(cluster_.device(entry.dst))) continue;
            const std::size_t x = position_in_server_[entry.dst.index()];
            for (std::size_t k = 0; k < exits; ++k) {
                const std::int64_t through = server.to_exit[x * exits + k];
                if (through == unreachable) continue;
                const DeviceId far = cluster_.link(server.exits[k]).dst;
                edges.push_back(
                    {fabric_index_[entry.src.index()], fabric_index_[far.index()], link_cost(entry) + through});
            }
        }
    }
    // The cheapest edge per pair (the others cannot be on a shortest path), as in-edges per device (CSR).
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
        return a.to != b.to ? a.to < b.to : a.from != b.from ? a.from < b.from : a.cost < b.cost;
    });
    fabric_in_offsets_.assign(fabric_devices_.size() + 1, 0);
    fabric_in_src_.clear();
    fabric_in_cost_.clear();
    for (std::size_t i = 0; i < edges.size(); ++i) {
        if (i > 0 && edges[i].to == edges[i - 1].to && edges[i].from == edges[i - 1].from) continue;
        ++fabric_in_offsets_[edges[i].to + 1];
        fabric_in_src_.push_back(edges[i].from);
        fabric_in_cost_.push_back(edges[i].cost);
    }
    for (std::size_t v = 0; v < fabric_devices_.size(); ++v) fabric_in_offsets_[v + 1] += fabric_in_offsets_[v];
}

std::uint32_t Router::distances_to_boundary(DeviceId b) {
    std::uint32_t& slot = boundary_slot_[b.index()];
    if (slot != UINT32_MAX) return slot;
    // One table of 8 bytes per device it covers for each boundary device: refused past half the memory budget.
    const std::size_t covered = fabric_only_ ? fabric_devices_.size() : cluster_.devices().size();
    const double bytes = 8.0 * static_cast<double>(covered) * static_cast<double>(boundary_distances_.size() + 1);
    if (bytes > static_cast<double>(engine::memory_budget()) / 2)
        throw engine::InputError(fmt::format(
            "routing to {} boundary devices of {} devices needs about {} of distance tables: beyond half the "
            "memory budget of {} (--max-memory); fewer GPUs, or a larger budget",
            boundary_distances_.size() + 1, cluster_.devices().size(), engine::format_memory(bytes),
            engine::format_memory(static_cast<double>(engine::memory_budget()))));
    slot = static_cast<std::uint32_t>(boundary_distances_.size());
    boundary_distances_.emplace_back();
    auto& dist = boundary_distances_.back();
    if (!fabric_only_) {
        compute_distances_to(b, dist);
        return slot;
    }
    // Dijkstra on the fabric graph's reversed edges; a device other than b relays only if it forwards.
    dist.assign(fabric_devices_.size(), unreachable);
    using Entry = std::pair<std::int64_t, std::uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> frontier;
    const std::uint32_t target = fabric_index_[b.index()];
    dist[target] = 0;
    frontier.emplace(0, target);
    while (!frontier.empty()) {
        const auto [d, v] = frontier.top();
        frontier.pop();
        if (d != dist[v]) continue;
        if (v != target && !forwards_traffic(cluster_.device(fabric_devices_[v]))) continue;
        for (std::uint32_t i = fabric_in_offsets_[v]; i < fabric_in_offsets_[v + 1]; ++i) {
            const std::int64_t candidate = d + fabric_in_cost_[i];
            if (candidate < dist[fabric_in_src_[i]]) {
                dist[fabric_in_src_[i]] = candidate;
                frontier.emplace(candidate, fabric_in_src_[i]);
            }
        }
    }
    return slot;
}

std::int64_t Router::to_boundary(DeviceId u, std::uint32_t slot) const {
    // On the fabric graph, only fabric devices have distances: `distance` takes a server's devices out through
    // their exits itself.
    const auto& dist = boundary_distances_[slot];
    return dist[fabric_only_ ? fabric_index_[u.index()] : u.index()];
}

}  // namespace clustersim::topo
