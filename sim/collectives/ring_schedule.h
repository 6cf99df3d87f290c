// A ring's transfers as a formula instead of a list: what append_ring adds, step by step, computed on demand.
// A ring all-reduce of n members makes 2(n-1) x n transfers; over 1,024 GPUs and 8 channels that is 16.7 M planned
// transfers (about 80 bytes each while the call runs) for a pattern described by the ring's order. The executor
// (sim/replay/replay_rings.cpp) keeps state only for the transfers in flight or waiting on a partial condition.
//
// Numbering and dependencies are exactly those of append_ring (ring.cpp), so a schedule and its expansion into a
// listed plan (CollectivePlan::expanded) run the same transfers in the same order: transfer `step * width + slot`
// of the ring, where slot i < n is position i's send to position i + 1 (with a relay, slot n - 1 is the last
// position's hop to the relay and slot n the relay's forward to position 0). A send waits for the piece it forwards
// (the transfer into its position one step earlier; the forward waits for its hop) and, inside one phase (one
// append_ring call), for the previous send on its own edge to have left (the channel's FIFO).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/collectives/planned_transfer.h"

namespace clustersim::sim {

class CollectivePlan;

/// One append_ring call of a schedule: `steps` steps whose piece offset follows from the step index.
struct RingPhase {
    std::uint32_t steps = 0;
    bool reduce = false;  // the receivers reduce what arrives (reduce-scatter steps)
};

struct RingSchedule {
    std::vector<std::uint32_t> order;     // members in ring order (at least two)
    std::vector<std::uint32_t> position;  // by member: its position in `order`
    std::uint32_t relay = UINT32_MAX;     // the wrap-around hop's relay member (PXN), or none
    std::uint64_t bytes = 0;              // split in n pieces, or sent whole by every position (`whole`)
    bool whole = false;
    std::vector<RingPhase> phases;  // one per append_ring call, in order
    std::uint64_t first = 0;        // the plan's index of the schedule's first transfer

    static constexpr std::uint64_t none = UINT64_MAX;

    [[nodiscard]] std::uint32_t members() const { return static_cast<std::uint32_t>(order.size()); }
    /// Transfers per step: one per position, and the relay's forward.
    [[nodiscard]] std::uint32_t width() const { return members() + (relay != UINT32_MAX ? 1 : 0); }
    [[nodiscard]] std::uint32_t steps() const;
    [[nodiscard]] std::uint64_t size() const { return std::uint64_t{steps()} * width(); }

    // Everything below takes and returns indices local to the schedule (plan index - first).
    [[nodiscard]] PlannedTransfer transfer(std::uint64_t local) const;
    /// The transfer whose arrival this one waits for (the piece it forwards), or none.
    [[nodiscard]] std::uint64_t data_dependency(std::uint64_t local) const;
    /// The previous send on the same edge in the same phase, which must have left first, or none.
    [[nodiscard]] std::uint64_t fifo_predecessor(std::uint64_t local) const;
    /// The transfer that waits for this one's arrival, or none.
    [[nodiscard]] std::uint64_t data_dependent(std::uint64_t local) const;
    /// The transfer that waits for this one to have left, or none.
    [[nodiscard]] std::uint64_t fifo_successor(std::uint64_t local) const;
    /// The first-step transfers that `member` sends or receives, in index order, into `out` (at most 4).
    std::uint32_t first_step_transfers(std::uint32_t member, std::uint64_t out[4]) const;
    /// Transfers `member` sends or receives over the whole schedule.
    [[nodiscard]] std::uint64_t member_transfers(std::uint32_t member) const;
    /// Appends the same transfers, listed, to `plan` (append_ring per phase).
    void expand_into(CollectivePlan& plan) const;

private:
    [[nodiscard]] bool phase_start(std::uint32_t step) const;
};

}  // namespace clustersim::sim
