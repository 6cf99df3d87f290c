// Hierarchical all-to-all as NCCL's PXN does it: data for a GPU on another node first goes over NVLink to the
// GPU of the sender's node that sits on the destination's rail (same local index), which forwards everything
// its node has for that destination in one rail-aligned transfer. Inside a node, data goes directly. Needs the
// same number of members on each of at least two nodes.
#include <map>

#include "sim/collectives/collective_algorithm.h"

namespace clustersim::sim {

using traces::CollectiveKind;

namespace {

class PxnAllToAll final : public CollectiveAlgorithm {
public:
    bool supports(const PlanRequest& r) const override {
        return r.kind == CollectiveKind::all_to_all && !layout(r).empty();
    }
    CollectivePlan plan(const PlanRequest& r) const override {
        CollectivePlan plan;
        const auto nodes = layout(r);
        const std::uint32_t n = r.members;
        const auto ppn = static_cast<std::uint32_t>(nodes.front().size());
        std::vector<std::uint32_t> node_of(n), local_of(n);
        for (std::uint32_t a = 0; a < nodes.size(); ++a) {
            for (std::uint32_t l = 0; l < ppn; ++l) {
                node_of[nodes[a][l]] = a;
                local_of[nodes[a][l]] = l;
            }
        }
        // Stage 1: direct inside the node, and to the rail peer for every remote destination.
        std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint32_t>>
            gathered;  // (peer, dst) -> transfers
        for (std::uint32_t i = 0; i < n; ++i) {
            for (std::uint32_t j = 0; j < n; ++j) {
                if (i == j) continue;
                const std::uint64_t piece = share_of(r.bytes_of(i), n, j);
                if (node_of[i] == node_of[j]) {
                    plan.add({i, j, piece, 0});
                    continue;
                }
                const std::uint32_t peer = nodes[node_of[i]][local_of[j]];
                auto& into = gathered[{peer, j}];
                if (peer != i) into.push_back(plan.add({i, peer, piece, 0}));
            }
        }
        // Stage 2: each rail peer sends its node's data for a remote destination in one transfer.
        for (std::uint32_t p = 0; p < n; ++p) {
            for (std::uint32_t j = 0; j < n; ++j) {
                if (node_of[p] == node_of[j] || local_of[p] != local_of[j]) continue;
                std::uint64_t node_bytes = 0;  // what p's node holds for j, p's own piece included
                for (const std::uint32_t k : nodes[node_of[p]]) node_bytes += share_of(r.bytes_of(k), n, j);
                plan.add({p, j, node_bytes, 1}, gathered[{p, j}]);
            }
        }
        return plan;
    }

private:
    static std::vector<std::vector<std::uint32_t>> layout(const PlanRequest& r) {
        if (r.node_of.size() != r.members) return {};
        std::map<std::uint32_t, std::size_t> slot;
        std::vector<std::vector<std::uint32_t>> nodes;
        for (std::uint32_t m = 0; m < r.members; ++m) {
            const auto [it, fresh] = slot.emplace(r.node_of[m], nodes.size());
            if (fresh) nodes.emplace_back();
            nodes[it->second].push_back(m);
        }
        if (nodes.size() < 2 || nodes.front().size() < 2) return {};
        for (const auto& node : nodes) {
            if (node.size() != nodes.front().size()) return {};
        }
        return nodes;
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_pxn_all_to_all() { return std::make_unique<PxnAllToAll>(); }

}  // namespace clustersim::sim
