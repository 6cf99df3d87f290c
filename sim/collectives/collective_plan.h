// A collective expanded into transfers between members of its communicator, each with the transfers it must
// wait for (data dependencies). A transfer starts when its sender and receiver have both entered the
// collective and its dependencies have arrived; so a late rank delays the others exactly as far as the
// algorithm's dependencies carry it, as in NCCL. Transfers run as flows on the network, so contention between
// them and with other traffic is simulated, not assumed.
//
// A plan is either a list of transfers with their dependencies, or (the ring algorithm's) ring schedules: the same
// transfers as a formula (ring_schedule.h), so that a call's plan takes memory by its members, not its transfers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/collectives/planned_transfer.h"
#include "sim/collectives/ring_schedule.h"
#include "traces/op_graph.h"

namespace clustersim::sim {

class CollectivePlan {
public:
    /// Adds a transfer that waits for the transfers `after` (indices returned by earlier calls).
    std::uint32_t add(PlannedTransfer t, std::span<const std::uint32_t> after = {});
    std::uint32_t add(PlannedTransfer t, std::initializer_list<std::uint32_t> after) {
        return add(t, std::span<const std::uint32_t>(after.begin(), after.size()));
    }
    /// The listed transfers (empty for a plan of ring schedules: see expanded()).
    [[nodiscard]] const std::vector<PlannedTransfer>& transfers() const { return transfers_; }
    [[nodiscard]] std::span<const std::uint32_t> after(std::uint32_t t) const {
        return {deps_.data() + offsets_[t], deps_.data() + offsets_[t + 1]};
    }
    /// Transfers in all, listed or scheduled.
    [[nodiscard]] std::uint64_t size() const;
    /// Adds a ring schedule (numbered after the transfers already in the plan); a plan holds either listed
    /// transfers or schedules, never both.
    void add_ring(RingSchedule ring);
    [[nodiscard]] const std::vector<RingSchedule>& rings() const { return rings_; }
    [[nodiscard]] bool scheduled() const { return !rings_.empty(); }
    /// Slots (positions and relays) of all the schedules together.
    [[nodiscard]] std::uint32_t slots() const {
        return rings_.empty() ? 0 : rings_.back().first_slot + rings_.back().width();
    }
    /// The schedule holding plan index `t` (scheduled plans only): one of a handful (one per channel).
    [[nodiscard]] const RingSchedule& ring_of(std::uint64_t t) const {
        std::size_t r = rings_.size() - 1;
        while (r > 0 && rings_[r].first > t) --r;
        return rings_[r];
    }
    /// Transfer `t`, listed or computed.
    [[nodiscard]] PlannedTransfer transfer(std::uint64_t t) const;
    /// The same plan with every transfer listed (the reference the schedules are tested against).
    [[nodiscard]] CollectivePlan expanded() const;
    /// Marks the transfers added from index `first` on as reducing (PlannedTransfer::reduces).
    void mark_reducing_from(std::size_t first) {
        for (std::size_t t = first; t < transfers_.size(); ++t) transfers_[t].reduces = true;
    }
    /// Set when the plan already spreads the collective over its channels (one ring each): the executor then
    /// sends each transfer as one flow instead of splitting it per channel.
    bool channels_planned = false;
    /// The heap memory its vectors hold.
    [[nodiscard]] std::size_t capacity_bytes() const {
        std::size_t bytes = transfers_.capacity() * sizeof(PlannedTransfer) +
                            (offsets_.capacity() + deps_.capacity()) * sizeof(std::uint32_t) +
                            rings_.capacity() * sizeof(RingSchedule);
        for (const RingSchedule& r : rings_) bytes += r.capacity_bytes();
        return bytes;
    }

private:
    std::vector<PlannedTransfer> transfers_;
    std::vector<std::uint32_t> offsets_;  // by transfer, and one past the last (empty until the first is added)
    std::vector<std::uint32_t> deps_;
    std::vector<RingSchedule> rings_;
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

}  // namespace clustersim::sim
