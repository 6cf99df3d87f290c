// Ring algorithms (NCCL's ring): all-reduce as n-1 reduce-scatter steps then n-1 all-gather steps of S/n from
// every member to the next, each step's send waiting for the previous step's receive; reduce-scatter and
// all-gather as n-1 such steps; broadcast and reduce as a chain through the ring, pipelined in chunks.
// Uncontended all-reduce time: 2(n-1)(alpha + S/(nB)).
#include <algorithm>

#include "sim/collectives/collective_algorithm.h"

namespace clustersim::sim {

using traces::CollectiveKind;

std::vector<std::uint32_t> append_ring(CollectivePlan& plan, std::span<const std::uint32_t> ring, std::uint32_t steps,
                                       std::uint64_t bytes, bool whole, std::uint32_t offset,
                                       std::span<const std::uint32_t> start_after, std::uint32_t first_step,
                                       std::uint32_t relay, bool reduce) {
    const auto n = static_cast<std::uint32_t>(ring.size());
    std::vector<std::uint32_t> last_into(start_after.begin(), start_after.end());
    last_into.resize(n, no_transfer);
    std::vector<std::uint32_t> next(n, no_transfer), last_from(n, no_transfer);
    std::vector<std::uint32_t> after;
    std::uint32_t last_relayed = no_transfer;  // the relay's previous forward (its own FIFO edge)
    for (std::uint32_t k = 0; k < steps; ++k) {
        for (std::uint32_t i = 0; i < n; ++i) {
            const std::uint32_t piece = (i + 2 * n - k % n - offset % n) % n;
            const std::uint64_t size = whole ? bytes : share_of(bytes, n, piece);
            // A send waits for the piece it forwards (received in the previous step) and, as in NCCL's channel
            // FIFO, for its own previous send on the same edge to have left.
            after.clear();
            if (last_into[i] != no_transfer) after.push_back(last_into[i]);
            if (i + 1 == n && relay != no_transfer) {
                // The wrap-around hop through the relay: over NVLink to it, then on from it (PXN).
                const std::uint32_t hop = plan.add({ring[i], relay, size, first_step + k, last_from[i]}, after);
                last_from[i] = hop;
                last_relayed = next[0] = plan.add({relay, ring[0], size, first_step + k, last_relayed, reduce}, {hop});
                continue;
            }
            last_from[i] = next[(i + 1) % n] =
                plan.add({ring[i], ring[(i + 1) % n], size, first_step + k, last_from[i], reduce}, after);
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
        std::vector<std::uint32_t> base(n);
        for (std::uint32_t i = 0; i < n; ++i) base[i] = i;
        if (r.ring_order.size() == n) base = r.ring_order;
        const std::uint64_t total = r.kind == CollectiveKind::barrier ? 0 : r.bytes;
        // Across nodes, NCCL gives each channel its own ring: the same node order, but each node's segment
        // rotated so that every channel leaves and enters the nodes through different GPUs, and so through
        // different NICs; each ring carries its share of the buffer. Modelled on switched nodes (any order inside
        // a node is as cheap), with at most one ring per GPU of the largest node (more would repeat). Elsewhere
        // (DGX-1's NVLink mesh, where the searched order matters, or one GPU per node) the caller may give one ring
        // per NIC (PlanRequest::channel_rings); otherwise there is one ring and the executor splits each transfer
        // over the channels instead.
        const std::uint32_t largest = r.switched_nodes ? largest_node_segment(r, base) : 0;
        const bool per_channel = largest > 1;
        const bool given = !per_channel && r.channel_rings.size() > 1;  // mesh nodes: the caller's NIC rings
        const auto rings = per_channel ? std::clamp<std::uint32_t>(r.channels, 1, largest)
                           : given     ? static_cast<std::uint32_t>(r.channel_rings.size())
                                       : 1U;
        plan.channels_planned = rings > 1;
        for (std::uint32_t k = 0; k < rings; ++k) {
            const std::vector<std::uint32_t> ring = per_channel ? rotated(r, base, k)
                                                    : given     ? r.channel_rings[k]
                                                                : base;
            const std::uint32_t relay = per_channel ? wrap_relay(r, ring) : no_transfer;
            // As a schedule: the same transfers as append_ring's, computed when they start (ring_schedule.h).
            RingSchedule schedule;
            schedule.order = ring;
            schedule.relay = relay;
            schedule.bytes = share_of(total, rings, k);
            switch (r.kind) {
                case CollectiveKind::all_reduce:
                case CollectiveKind::barrier:
                    schedule.phases = {{n - 1, r.kind == CollectiveKind::all_reduce}, {n - 1, false}};
                    break;
                case CollectiveKind::reduce_scatter:
                    schedule.phases = {{n - 1, true}};
                    break;
                case CollectiveKind::all_gather:
                    schedule.whole = true;
                    schedule.phases = {{n - 1, false}};
                    break;
                default:
                    break;
            }
            if (!schedule.phases.empty()) plan.add_ring(std::move(schedule));
        }
        switch (r.kind) {
            case CollectiveKind::broadcast:
                return chain(n, total, std::max<std::uint32_t>(1, r.chunks), false);
            case CollectiveKind::reduce: {
                CollectivePlan reduction = chain(n, total, std::max<std::uint32_t>(1, r.chunks), true);
                reduction.mark_reducing_from(0);
                return reduction;
            }
            default:
                break;
        }
        return plan;
    }

private:
    /// The most members of one node the ring visits consecutively, 0 unless it visits more than one node.
    static std::uint32_t largest_node_segment(const PlanRequest& r, const std::vector<std::uint32_t>& ring) {
        if (r.node_of.size() != r.members) return 0;
        std::uint32_t changes = 0, run = 1, largest = 1;
        for (std::size_t i = 1; i < ring.size(); ++i) {
            const bool change = r.node_of[ring[i]] != r.node_of[ring[i - 1]];
            changes += change;
            run = change ? 1 : run + 1;
            largest = std::max(largest, run);
        }
        return changes > 0 ? largest : 0;
    }
    /// With an odd number of nodes the rotated ring's wrap-around hop (last node to node 0) changes rails; as
    /// NCCL's PXN does, it goes over NVLink to the last node's GPU at ring[0]'s local position, which sends on
    /// along the rail. Returns that GPU, or no_transfer when the hop already stays on a rail.
    static std::uint32_t wrap_relay(const PlanRequest& r, const std::vector<std::uint32_t>& ring) {
        std::vector<std::uint32_t> first_node, last_node;
        for (const std::uint32_t m : ring) {
            if (r.node_of[m] == r.node_of[ring.front()]) first_node.push_back(m);
            if (r.node_of[m] == r.node_of[ring.back()]) last_node.push_back(m);
        }
        if (r.node_of[ring.front()] == r.node_of[ring.back()] || first_node.size() != last_node.size())
            return no_transfer;
        std::sort(first_node.begin(), first_node.end());
        std::sort(last_node.begin(), last_node.end());
        const auto position = std::find(first_node.begin(), first_node.end(), ring.front()) - first_node.begin();
        const std::uint32_t relay = last_node[static_cast<std::size_t>(position)];
        const auto exit_position = std::find(last_node.begin(), last_node.end(), ring.back()) - last_node.begin();
        return exit_position == position ? no_transfer : relay;
    }
    /// Ring k: each node's consecutive segment reordered so that the ring leaves a node through the same local
    /// position it enters the next one (the same rail on a rail-optimized fabric): even-numbered nodes run from
    /// position k to k-1, odd-numbered ones from k-1 to k. With an even number of nodes every crossing stays on
    /// a rail; with an odd number, the wrap-around hop changes rails (wrap_relay). Inside a node any order is assumed
    /// cheap (a switch), as on NVSwitch servers.
    static std::vector<std::uint32_t> rotated(const PlanRequest& r, const std::vector<std::uint32_t>& ring,
                                              std::uint32_t k) {
        std::vector<std::uint32_t> out;
        out.reserve(ring.size());
        std::size_t node = 0;
        for (std::size_t start = 0; start < ring.size(); ++node) {
            std::size_t end = start;
            while (end < ring.size() && r.node_of[ring[end]] == r.node_of[ring[start]]) ++end;
            const std::size_t size = end - start;
            // Positions by member index (the node-local order of GPUs), so that "the same position" is the same
            // local GPU, and the same rail, on every node.
            std::vector<std::uint32_t> segment(ring.begin() + static_cast<std::ptrdiff_t>(start),
                                               ring.begin() + static_cast<std::ptrdiff_t>(end));
            std::sort(segment.begin(), segment.end());
            if (size == 1) {
                out.push_back(segment[0]);
            } else {
                const std::size_t first = node % 2 == 0 ? k % size : (k + size - 1) % size;
                const std::size_t last = node % 2 == 0 ? (k + size - 1) % size : k % size;
                out.push_back(segment[first]);
                for (std::size_t i = 1; i < size; ++i) {
                    const std::size_t position = (first + i) % size;
                    if (position != last) out.push_back(segment[position]);
                }
                out.push_back(segment[last]);
            }
            start = end;
        }
        return out;
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_ring() { return std::make_unique<Ring>(); }

}  // namespace clustersim::sim
