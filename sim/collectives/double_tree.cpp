// NCCL's double binary tree for all-reduce: two binary trees, each reducing and broadcasting half the data; a
// member that is interior in one tree is a leaf in the other (tree B is tree A over the members in reverse
// order). Each half is pipelined in chunks: a chunk moves up when the member has it from all its children, and
// down when the member has it from its parent; chunks on one edge go in order.
#include "sim/collectives/collective_algorithm.h"

namespace clustersim::sim {

using traces::CollectiveKind;

namespace {

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
        for (std::uint32_t tree = 0; tree < 2; ++tree) {
            const std::uint64_t half = share_of(bytes, 2, tree);
            // Position p in the heap-ordered tree is member p (tree 0) or n-1-p (tree 1).
            auto member = [&](std::uint32_t p) { return tree == 0 ? p : n - 1 - p; };
            std::vector<std::vector<std::uint32_t>> up_into(static_cast<std::size_t>(n) * chunks);  // by (p, chunk)
            std::vector<std::uint32_t> up_edge_last(n, no_transfer),
                down_into(static_cast<std::size_t>(n) * chunks, no_transfer);
            // Reduce: deepest positions first, so children's transfers exist before their parent's.
            for (std::uint32_t p = n; p-- > 1;) {
                const std::uint32_t parent = (p - 1) / 2;
                for (std::uint32_t c = 0; c < chunks; ++c) {
                    std::vector<std::uint32_t> after = up_into[static_cast<std::size_t>(p) * chunks + c];
                    if (up_edge_last[p] != no_transfer) after.push_back(up_edge_last[p]);
                    up_edge_last[p] = plan.add({member(p), member(parent), share_of(half, chunks, c), c}, after);
                    up_into[static_cast<std::size_t>(parent) * chunks + c].push_back(up_edge_last[p]);
                }
            }
            // Broadcast from the root: position p forwards chunk c to its children once it has it.
            std::vector<std::uint32_t> down_edge_last(n, no_transfer);
            for (std::uint32_t p = 1; p < n; ++p) {
                const std::uint32_t parent = (p - 1) / 2;
                for (std::uint32_t c = 0; c < chunks; ++c) {
                    std::vector<std::uint32_t> after;
                    if (parent == 0)
                        after = up_into[c];  // the root has chunk c reduced
                    else
                        after.push_back(down_into[static_cast<std::size_t>(parent) * chunks + c]);
                    if (down_edge_last[p] != no_transfer) after.push_back(down_edge_last[p]);
                    down_edge_last[p] = plan.add({member(parent), member(p), share_of(half, chunks, c), c}, after);
                    down_into[static_cast<std::size_t>(p) * chunks + c] = down_edge_last[p];
                }
            }
        }
        return plan;
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_double_tree() { return std::make_unique<DoubleTree>(); }

}  // namespace clustersim::sim
