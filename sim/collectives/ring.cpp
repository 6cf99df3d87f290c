// Ring algorithms (NCCL's ring): all-reduce as n-1 reduce-scatter steps then n-1 all-gather steps of S/n from
// every member to the next, each step's send waiting for the previous step's receive; reduce-scatter and
// all-gather as n-1 such steps; broadcast and reduce as a chain through the ring, pipelined in chunks.
// Uncontended all-reduce time: 2(n-1)(alpha + S/(nB)).
#include "sim/collectives/collective_algorithm.h"

namespace clustersim::sim {

using traces::CollectiveKind;

std::vector<std::uint32_t> append_ring(CollectivePlan& plan, std::span<const std::uint32_t> ring, std::uint32_t steps,
                                       std::uint64_t bytes, bool whole, std::uint32_t offset,
                                       std::span<const std::uint32_t> start_after, std::uint32_t first_step) {
    const auto n = static_cast<std::uint32_t>(ring.size());
    std::vector<std::uint32_t> last_into(start_after.begin(), start_after.end());
    last_into.resize(n, no_transfer);
    std::vector<std::uint32_t> next(n, no_transfer), last_from(n, no_transfer);
    std::vector<std::uint32_t> after;
    for (std::uint32_t k = 0; k < steps; ++k) {
        for (std::uint32_t i = 0; i < n; ++i) {
            const std::uint32_t piece = (i + 2 * n - k % n - offset % n) % n;
            const std::uint64_t size = whole ? bytes : share_of(bytes, n, piece);
            // A send waits for the piece it forwards (received in the previous step) and, as in NCCL's channel
            // FIFO, for its own previous send on the same edge to have left.
            after.clear();
            if (last_into[i] != no_transfer) after.push_back(last_into[i]);
            last_from[i] = next[(i + 1) % n] =
                plan.add({ring[i], ring[(i + 1) % n], size, first_step + k, last_from[i]}, after);
        }
        last_into = next;
    }
    return last_into;
}

namespace {

/// Broadcast (root 0 down the chain) or reduce (up the chain to 0), pipelined in `chunks`.
CollectivePlan chain(std::uint32_t n, std::uint64_t bytes, std::uint32_t chunks, bool towards_root) {
    CollectivePlan plan;
    std::vector<std::uint32_t> previous_hop(chunks, no_transfer);  // same chunk, previous hop
    for (std::uint32_t h = 0; h + 1 < n; ++h) {
        const std::uint32_t src = towards_root ? n - 1 - h : h, dst = towards_root ? n - 2 - h : h + 1;
        std::uint32_t previous_chunk = no_transfer;
        for (std::uint32_t c = 0; c < chunks; ++c) {
            std::vector<std::uint32_t> after;
            if (previous_hop[c] != no_transfer) after.push_back(previous_hop[c]);
            previous_chunk = previous_hop[c] =
                plan.add({src, dst, share_of(bytes, chunks, c), h + c, previous_chunk}, after);
        }
    }
    return plan;
}

class Ring final : public CollectiveAlgorithm {
public:
    bool supports(const PlanRequest& r) const override { return r.kind != CollectiveKind::all_to_all; }
    CollectivePlan plan(const PlanRequest& r) const override {
        CollectivePlan plan;
        const std::uint32_t n = r.members;
        if (n < 2) return plan;
        std::vector<std::uint32_t> ring(n);
        for (std::uint32_t i = 0; i < n; ++i) ring[i] = i;
        if (r.ring_order.size() == n) ring = r.ring_order;
        const std::uint64_t bytes = r.kind == CollectiveKind::barrier ? 0 : r.bytes;
        switch (r.kind) {
            case CollectiveKind::all_reduce:
            case CollectiveKind::barrier: {
                const auto after = append_ring(plan, ring, n - 1, bytes, false, 0, {}, 0);
                append_ring(plan, ring, n - 1, bytes, false, n - 1, after, n - 1);
                break;
            }
            case CollectiveKind::reduce_scatter:
                append_ring(plan, ring, n - 1, bytes, false, 0, {}, 0);
                break;
            case CollectiveKind::all_gather:
                append_ring(plan, ring, n - 1, bytes, true, 0, {}, 0);
                break;
            case CollectiveKind::broadcast:
                return chain(n, bytes, std::max<std::uint32_t>(1, r.chunks), false);
            case CollectiveKind::reduce:
                return chain(n, bytes, std::max<std::uint32_t>(1, r.chunks), true);
            case CollectiveKind::all_to_all:
                break;
        }
        return plan;
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_ring() { return std::make_unique<Ring>(); }

}  // namespace clustersim::sim
