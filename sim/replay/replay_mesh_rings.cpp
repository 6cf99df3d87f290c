// Rings per NIC across nodes without a switch (DGX-1's NVLink hybrid cube-mesh and its four NICs): as NCCL
// builds them, each channel's ring enters and leaves every node through the two GPUs of one NIC (one PCIe
// switch), and visits the node's other GPUs over direct NVLink links in between (a Hamiltonian path, found by
// search). Crossings then stay on that NIC's rail, and the channels together use every NIC of a node.
#include <algorithm>
#include <map>

#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

namespace {

// A path from `from` to `to` through every vertex, over `adjacent` (depth-first; at most 8 vertices here).
bool hamiltonian_path(const std::vector<std::vector<std::uint8_t>>& adjacent, std::uint32_t to,
                      std::vector<std::uint32_t>& path, std::vector<std::uint8_t>& used) {
    const auto m = static_cast<std::uint32_t>(adjacent.size());
    if (path.size() == m) return path.back() == to;
    for (std::uint32_t next = 0; next < m; ++next) {
        if (used[next] || !adjacent[path.back()][next] || (next == to && path.size() + 1 < m)) continue;
        used[next] = 1;
        path.push_back(next);
        if (hamiltonian_path(adjacent, to, path, used)) return true;
        path.pop_back();
        used[next] = 0;
    }
    return false;
}

}  // namespace

std::vector<std::vector<std::uint32_t>> ReplayEngine::find_mesh_rings(traces::CommId comm) {
    std::vector<std::vector<std::uint32_t>> rings;
    const auto& ranks = g_.comms[comm.index()].ranks;
    // Members by node, nodes in order of first appearance; each node's members in member order (their position).
    std::vector<std::pair<std::int32_t, std::vector<std::uint32_t>>> nodes;
    std::map<std::int32_t, std::size_t> node_at;  // node -> its place in `nodes`
    for (std::uint32_t m = 0; m < ranks.size(); ++m) {
        const topo::DeviceId gpu = gpu_of(ranks[m]);
        if (node_switch(gpu).valid()) return rings;  // switched nodes: ring.cpp's rotated rings
        const std::int32_t node = cluster_.device(gpu).node;
        const auto [it, added] = node_at.try_emplace(node, nodes.size());
        if (added) nodes.emplace_back(node, std::vector<std::uint32_t>{});
        nodes[it->second].second.push_back(m);
    }
    const std::size_t per_node = nodes.front().second.size();
    if (nodes.size() < 2 || per_node < 2 ||
        std::any_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n.second.size() != per_node; }))
        return rings;
    // Direct NVLink links among the first node's members, and the NIC each one reaches other nodes through.
    const auto& local = nodes.front().second;
    std::vector<std::vector<std::uint8_t>> adjacent(per_node, std::vector<std::uint8_t>(per_node, 0));
    std::map<std::uint32_t, std::vector<std::uint32_t>> by_nic;  // NIC device -> positions, in order
    for (std::uint32_t i = 0; i < per_node; ++i) {
        const topo::DeviceId gpu = gpu_of(ranks[local[i]]);
        for (const topo::LinkId l : cluster_.out_links(gpu)) {
            const topo::Link& link = cluster_.link(l);
            if (link.kind != topo::LinkKind::nvlink) continue;
            for (std::uint32_t j = 0; j < per_node; ++j)
                adjacent[i][j] |= static_cast<std::uint8_t>(link.dst == gpu_of(ranks[local[j]]));
        }
        route_scratch_.clear();
        net_.router().route(gpu, gpu_of(ranks[nodes[1].second[i]]), 0, route_scratch_);
        for (const topo::LinkId l : route_scratch_) {
            const topo::DeviceId at = cluster_.link(l).dst;
            if (cluster_.device(at).kind == topo::DeviceKind::nic) {
                by_nic[at.value].push_back(i);
                break;
            }
        }
    }
    // One ring per NIC with two GPUs (entering through the first, leaving through the second), up to the channels.
    for (const auto& [nic, positions] : by_nic) {
        if (positions.size() < 2 || rings.size() >= std::max<std::uint32_t>(1, options_.channels)) continue;
        std::vector<std::uint32_t> path{positions[0]};
        std::vector<std::uint8_t> used(per_node, 0);
        used[positions[0]] = 1;
        if (!hamiltonian_path(adjacent, positions[1], path, used)) continue;
        std::vector<std::uint32_t> ring;
        for (const auto& node : nodes)
            for (const std::uint32_t p : path) ring.push_back(node.second[p]);
        rings.push_back(std::move(ring));
    }
    if (rings.size() < 2) rings.clear();  // one ring: the searched order does as well
    return rings;
}

}  // namespace clustersim::sim
