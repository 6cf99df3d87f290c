// Hierarchical all-reduce (two levels): a ring reduce-scatter inside each node over NVLink, a ring all-reduce
// of each 1/ppn piece across the nodes among the members with the same local index (one per rail), and a ring
// all-gather inside each node. Needs the same number of members (ppn) on every node and at least two nodes.
#include <map>

#include "sim/collectives/collective_algorithm.h"

namespace clustersim::sim {

using traces::CollectiveKind;

namespace {

/// Members grouped by node (nodes in order of first appearance), or empty when the layout does not fit.
std::vector<std::vector<std::uint32_t>> by_node(const PlanRequest& r) {
    std::map<std::uint32_t, std::size_t> slot;
    std::vector<std::vector<std::uint32_t>> nodes;
    for (std::uint32_t m = 0; m < r.members && m < r.node_of.size(); ++m) {
        const auto [it, fresh] = slot.emplace(r.node_of[m], nodes.size());
        if (fresh) nodes.emplace_back();
        nodes[it->second].push_back(m);
    }
    if (r.node_of.size() != r.members || nodes.size() < 2) return {};
    for (const auto& node : nodes) {
        if (node.size() != nodes.front().size()) return {};
    }
    return nodes;
}

class Hierarchical final : public CollectiveAlgorithm {
public:
    bool supports(const PlanRequest& r) const override {
        return (r.kind == CollectiveKind::all_reduce || r.kind == CollectiveKind::barrier) && !by_node(r).empty();
    }
    CollectivePlan plan(const PlanRequest& r) const override {
        CollectivePlan plan;
        const auto nodes = by_node(r);
        const std::uint64_t bytes = r.kind == CollectiveKind::barrier ? 0 : r.bytes;
        const auto ppn = static_cast<std::uint32_t>(nodes.front().size());
        const auto node_count = static_cast<std::uint32_t>(nodes.size());
        std::vector<std::uint32_t> last(r.members, no_transfer);
        // Phase 1: reduce-scatter inside each node; local index l ends holding piece l (of ppn).
        const bool reducing = r.kind != CollectiveKind::barrier;
        if (ppn > 1) {
            for (const auto& node : nodes) {
                const auto into = append_ring(plan, node, ppn - 1, bytes, false, 0, {}, 0, no_transfer, reducing);
                for (std::uint32_t l = 0; l < ppn; ++l) last[node[l]] = into[l];
            }
        }
        // Phase 2: for each local index, a ring all-reduce of its piece across the nodes.
        for (std::uint32_t l = 0; l < ppn; ++l) {
            std::vector<std::uint32_t> rail, start;
            for (const auto& node : nodes) {
                rail.push_back(node[l]);
                start.push_back(last[node[l]]);
            }
            const std::uint64_t piece = share_of(bytes, ppn, l);
            const auto mid =
                append_ring(plan, rail, node_count - 1, piece, false, 0, start, ppn - 1, no_transfer, reducing);
            const auto end =
                append_ring(plan, rail, node_count - 1, piece, false, node_count - 1, mid, ppn + node_count - 2);
            for (std::uint32_t k = 0; k < node_count; ++k) last[rail[k]] = end[k];
        }
        // Phase 3: all-gather of the reduced pieces inside each node.
        if (ppn > 1) {
            for (const auto& node : nodes) {
                std::vector<std::uint32_t> start;
                for (const std::uint32_t m : node) start.push_back(last[m]);
                append_ring(plan, node, ppn - 1, bytes, false, ppn - 1, start, ppn + 2 * node_count - 3);
            }
        }
        return plan;
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_hierarchical() { return std::make_unique<Hierarchical>(); }

}  // namespace clustersim::sim
