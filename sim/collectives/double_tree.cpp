// NCCL's double binary tree for all-reduce: two trees, each reducing and broadcasting half the data. As in
// NCCL, a tree is a chain inside each node (from its leader) and a binary tree across the nodes' leaders; the
// second tree mirrors the first (node order and chain order reversed), so a member that is interior in one
// tree is a leaf in the other. Each half is pipelined in chunks: a chunk goes up once the member has it from
// all its children, and down once the member has it from its parent; chunks on one edge leave in order.
// Across nodes, NCCL runs a pair of trees per channel, each channel entering and leaving the nodes through a
// different GPU (and so its own NIC). On switched nodes, channel c's chains start at each node's c-th member,
// and the buffer is split evenly over min(channels, smallest node) channels.
#include <algorithm>
#include <map>

#include "sim/collectives/collective_algorithm.h"

namespace clustersim::sim {

using traces::CollectiveKind;

namespace {

/// Members grouped by node, nodes in order of first appearance (each member its own node without a layout).
std::vector<std::vector<std::uint32_t>> groups_of(const PlanRequest& r) {
    std::vector<std::vector<std::uint32_t>> nodes;
    if (r.node_of.size() != r.members) {
        for (std::uint32_t m = 0; m < r.members; ++m) nodes.push_back({m});
        return nodes;
    }
    std::map<std::uint32_t, std::size_t> slot;
    for (std::uint32_t m = 0; m < r.members; ++m) {
        const auto [it, fresh] = slot.emplace(r.node_of[m], nodes.size());
        if (fresh) nodes.emplace_back();
        nodes[it->second].push_back(m);
    }
    return nodes;
}

/// Parent of every member in tree `mirror` (no_transfer for the root).
std::vector<std::uint32_t> tree_parents(const std::vector<std::vector<std::uint32_t>>& nodes, std::uint32_t members,
                                        bool mirror) {
    std::vector<std::uint32_t> parent(members, no_transfer);
    const std::size_t count = nodes.size();
    auto node_at = [&](std::size_t heap_position) -> const std::vector<std::uint32_t>& {
        return nodes[mirror ? count - 1 - heap_position : heap_position];
    };
    auto chain = [&](const std::vector<std::uint32_t>& node, std::size_t k) {
        return mirror ? node[node.size() - 1 - k] : node[k];
    };
    for (std::size_t q = 0; q < count; ++q) {
        const auto& node = node_at(q);
        for (std::size_t k = 1; k < node.size(); ++k) parent[chain(node, k)] = chain(node, k - 1);
        if (q > 0) parent[chain(node, 0)] = chain(node_at((q - 1) / 2), 0);
    }
    return parent;
}

class DoubleTree final : public CollectiveAlgorithm {
public:
    bool supports(const PlanRequest& r) const override {
        return r.kind == CollectiveKind::all_reduce || r.kind == CollectiveKind::barrier;
    }
    CollectivePlan plan(const PlanRequest& r) const override {
        CollectivePlan plan;
        const std::uint32_t n = r.members;
        if (n < 2) return plan;
        const std::uint64_t bytes = r.kind == CollectiveKind::barrier ? 0 : r.bytes;
        const std::uint32_t chunks = std::max<std::uint32_t>(1, r.chunks);
        const auto nodes = groups_of(r);
        std::size_t smallest = nodes.front().size();
        for (const auto& node : nodes) smallest = std::min(smallest, node.size());
        const auto channels = nodes.size() > 1 && r.switched_nodes
                                  ? static_cast<std::uint32_t>(std::clamp<std::size_t>(r.channels, 1, smallest))
                                  : 1U;
        plan.channels_planned = channels > 1;
        for (std::uint32_t c = 0; c < channels; ++c) {
            auto rotated = nodes;
            for (auto& node : rotated) std::rotate(node.begin(), node.begin() + c, node.end());
            append_tree_pair(plan, rotated, n, share_of(bytes, channels, c), chunks);
        }
        return plan;
    }

private:
    /// One channel: two mirrored trees, each reducing and broadcasting half of `bytes`.
    static void append_tree_pair(CollectivePlan& plan, const std::vector<std::vector<std::uint32_t>>& nodes,
                                 std::uint32_t n, std::uint64_t bytes, std::uint32_t chunks) {
        for (std::uint32_t tree = 0; tree < 2; ++tree) {
            const std::uint64_t half = share_of(bytes, 2, tree);
            const auto parent = tree_parents(nodes, n, tree == 1);
            std::vector<std::uint32_t> depth(n, 0), order(n);
            for (std::uint32_t m = 0; m < n; ++m) {
                for (std::uint32_t p = parent[m]; p != no_transfer; p = parent[p]) ++depth[m];
                order[m] = m;
            }
            std::stable_sort(order.begin(), order.end(),
                             [&](std::uint32_t a, std::uint32_t b) { return depth[a] > depth[b]; });
            const auto at = [&](std::uint32_t m, std::uint32_t c) { return static_cast<std::size_t>(m) * chunks + c; };
            std::vector<std::vector<std::uint32_t>> up_into(static_cast<std::size_t>(n) * chunks);
            // Reduce: deepest members first, so a member's children have sent before it sends.
            const std::size_t first_up = plan.size();
            for (const std::uint32_t m : order) {
                if (parent[m] == no_transfer) continue;
                std::uint32_t previous = no_transfer;
                for (std::uint32_t c = 0; c < chunks; ++c) {
                    previous =
                        plan.add({m, parent[m], share_of(half, chunks, c), depth[m] + c, previous}, up_into[at(m, c)]);
                    up_into[at(parent[m], c)].push_back(previous);
                }
            }
            plan.mark_reducing_from(first_up);
            // Broadcast: shallowest first; the root starts a chunk once it is fully reduced.
            std::vector<std::uint32_t> down_into(static_cast<std::size_t>(n) * chunks, no_transfer);
            for (auto it = order.rbegin(); it != order.rend(); ++it) {
                const std::uint32_t m = *it;
                if (parent[m] == no_transfer) continue;
                const std::uint32_t p = parent[m];
                std::uint32_t previous = no_transfer;
                for (std::uint32_t c = 0; c < chunks; ++c) {
                    const std::vector<std::uint32_t> after =
                        parent[p] == no_transfer ? up_into[at(p, c)] : std::vector<std::uint32_t>{down_into[at(p, c)]};
                    previous = down_into[at(m, c)] =
                        plan.add({p, m, share_of(half, chunks, c), depth[m] + c, previous}, after);
                }
            }
        }
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_double_tree() { return std::make_unique<DoubleTree>(); }

}  // namespace clustersim::sim
