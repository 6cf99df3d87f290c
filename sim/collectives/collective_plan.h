// A collective expanded into transfers between members of its communicator, each with the transfers it must
// wait for (data dependencies). A transfer starts when its sender and receiver have both entered the
// collective and its dependencies have arrived; so a late rank delays the others exactly as far as the
// algorithm's dependencies carry it, as in NCCL. Transfers run as flows on the network, so contention between
// them and with other traffic is simulated, not assumed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "traces/op_graph.h"

namespace clustersim::sim {

/// An endpoint that is not a member: the NVSwitch of the other endpoint's node (in-switch reduction, NVLS).
inline constexpr std::uint32_t switch_endpoint = UINT32_MAX - 1;

struct PlannedTransfer {
    std::uint32_t src = 0;  // member index in the communicator, or switch_endpoint
    std::uint32_t dst = 0;
    std::uint64_t bytes = 0;
    std::uint32_t step = 0;  // algorithm step, for latency accounting and display
    /// A transfer on the same edge whose last byte must have left the sender first (the channel's FIFO: sends
    /// on one connection go one after the other, but a send's latency overlaps the next one).
    std::uint32_t after_sent = UINT32_MAX;
    /// The receiver reduces what arrives into its own data (reduce-scatter steps, tree and chain reductions):
    /// the GPU reads, adds and writes it, which the executor times at the GPU's memory bandwidth.
    bool reduces = false;
};

class CollectivePlan {
public:
    /// Adds a transfer that waits for the transfers `after` (indices returned by earlier calls).
    std::uint32_t add(PlannedTransfer t, std::span<const std::uint32_t> after = {});
    std::uint32_t add(PlannedTransfer t, std::initializer_list<std::uint32_t> after) {
        return add(t, std::span<const std::uint32_t>(after.begin(), after.size()));
    }
    [[nodiscard]] const std::vector<PlannedTransfer>& transfers() const { return transfers_; }
    [[nodiscard]] std::span<const std::uint32_t> after(std::uint32_t t) const {
        return {deps_.data() + offsets_[t], deps_.data() + offsets_[t + 1]};
    }
    [[nodiscard]] std::size_t size() const { return transfers_.size(); }
    /// Marks the transfers added from index `first` on as reducing (PlannedTransfer::reduces).
    void mark_reducing_from(std::size_t first) {
        for (std::size_t t = first; t < transfers_.size(); ++t) transfers_[t].reduces = true;
    }
    /// Bytes all transfers move together.
    [[nodiscard]] std::uint64_t total_bytes() const;
    /// Number of sequential steps (1 + the largest step index), 0 for an empty plan.
    [[nodiscard]] std::uint32_t steps() const;
    /// Set when the plan already spreads the collective over its channels (one ring each): the executor then
    /// sends each transfer as one flow instead of splitting it per channel.
    bool channels_planned = false;

private:
    std::vector<PlannedTransfer> transfers_;
    std::vector<std::uint32_t> offsets_ = {0};
    std::vector<std::uint32_t> deps_;
};

/// What an algorithm needs to know to expand a collective.
struct PlanRequest {
    traces::CollectiveKind kind = traces::CollectiveKind::all_reduce;
    std::uint32_t members = 1;
    std::uint64_t bytes = 0;                // per rank; all_gather: each rank's contribution; others: the buffer
    std::vector<std::uint32_t> node_of;     // node (server) of each member, for hierarchical algorithms
    std::uint32_t chunks = 1;               // pipelining chunks (tree)
    bool switch_reduction = false;          // all members on one node with an NVSwitch that can reduce (NVLS)
    std::vector<std::uint32_t> ring_order;  // members in ring order (empty: member order), as NCCL's search finds
    std::uint32_t channels = 1;             // NCCL channels: across nodes, a ring per channel (see ring.cpp)
    bool switched_nodes = false;            // every node's GPUs meet at a switch: any order inside is as cheap
    /// Rings of member indices, one per channel, that the caller found for nodes without a switch (each enters
    /// and leaves every node through GPUs of one NIC, over direct NVLink hops inside); empty: none.
    std::vector<std::vector<std::uint32_t>> channel_rings;
    /// Per-member sizes where they differ (all_gather: each member's contribution; all_to_all: what each member
    /// sends, spread evenly over its peers); empty: every member has `bytes`. Only direct and PXN plan them.
    std::vector<std::uint64_t> member_bytes;
    [[nodiscard]] std::uint64_t bytes_of(std::uint32_t member) const {
        return member_bytes.empty() ? bytes : member_bytes[member];
    }
};

/// The share of `bytes` that chunk `chunk` of `parts` carries: the first ones take the remainder.
constexpr std::uint64_t share_of(std::uint64_t bytes, std::uint64_t parts, std::uint64_t chunk) {
    return bytes / parts + (chunk < bytes % parts ? 1 : 0);
}

}  // namespace clustersim::sim
