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

#include <algorithm>
#include <cstdint>
#include <utility>
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
    std::vector<std::uint32_t> order;  // members in ring order: each of members 0 .. n-1 once, n >= 2
    std::uint32_t relay = UINT32_MAX;  // the wrap-around hop's relay member (PXN), or none
    std::uint64_t bytes = 0;           // split in n pieces, or sent whole by every position (`whole`)
    bool whole = false;
    std::vector<RingPhase> phases;  // one per append_ring call, in order
    /// The whole ring's positions when only its first members() are simulated, as a ring of their own whose last
    /// position sends to position 0 in place of position members() (a call folded by the ring's symmetry under a
    /// shift of its positions: sim/replay/replay_symmetry_fold.cpp); 0: the ring is whole. Then `bytes` is those
    /// positions' share (members() equal pieces of the whole ring's), and steps go up to twice `positions`.
    std::uint32_t positions = 0;
    std::uint64_t first = 0;       // the plan's index of the schedule's first transfer (set by add_ring)
    std::uint32_t first_slot = 0;  // the slots of the plan's earlier schedules (set by add_ring)

    static constexpr std::uint64_t none = UINT64_MAX;
    /// A transfer's place: its step, and its slot in the step.
    struct At {
        std::uint32_t step = 0;
        std::uint32_t slot = 0;
    };

    /// Computes what the formulas read often (each member's position, steps in all, phase starts, piece sizes) and
    /// checks that `order` visits every member once; CollectivePlan::add_ring calls it.
    void prepare();
    [[nodiscard]] std::uint32_t members() const { return static_cast<std::uint32_t>(order.size()); }
    /// Transfers per step: one per position, and the relay's forward.
    [[nodiscard]] std::uint32_t width() const { return members() + (relay != UINT32_MAX ? 1 : 0); }
    [[nodiscard]] std::uint32_t steps() const { return steps_; }
    [[nodiscard]] std::uint64_t size() const { return std::uint64_t{steps_} * width(); }
    [[nodiscard]] At at(std::uint64_t local) const {
        const std::uint32_t w = width();
        if (local < (std::uint64_t{1} << 32)) {  // 32-bit division where it fits (most rings): a few times faster
            const auto l = static_cast<std::uint32_t>(local);
            return {l / w, l % w};
        }
        return {static_cast<std::uint32_t>(local / w), static_cast<std::uint32_t>(local % w)};
    }
    [[nodiscard]] std::uint64_t local_of(At a) const { return std::uint64_t{a.step} * width() + a.slot; }

    /// No place (a transfer without that dependency or dependent).
    static constexpr At nowhere{UINT32_MAX, UINT32_MAX};
    [[nodiscard]] static bool exists(At a) { return a.step != UINT32_MAX; }

    // By place, and by index local to the schedule (plan index - first; `none` for no transfer).
    [[nodiscard]] PlannedTransfer transfer(At a) const;
    [[nodiscard]] PlannedTransfer transfer(std::uint64_t local) const { return transfer(at(local)); }
    /// Only the transfer's sender and receiver (transfer(a).src and .dst), without its bytes and phase.
    [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> ends(At a) const;
    /// The transfer whose arrival this one waits for (the piece it forwards).
    [[nodiscard]] At data_dependency(At a) const;
    [[nodiscard]] std::uint64_t data_dependency(std::uint64_t local) const {
        return local_or_none(data_dependency(at(local)));
    }
    /// The previous send on the same edge in the same phase, which must have left first.
    [[nodiscard]] At fifo_predecessor(At a) const {
        return a.step == 0 || phase_start(a.step) ? nowhere : At{a.step - 1, a.slot};
    }
    [[nodiscard]] std::uint64_t fifo_predecessor(std::uint64_t local) const {
        return local_or_none(fifo_predecessor(at(local)));
    }
    /// The transfer that waits for this one's arrival.
    [[nodiscard]] At data_dependent(At a) const;
    [[nodiscard]] std::uint64_t data_dependent(std::uint64_t local) const {
        return local_or_none(data_dependent(at(local)));
    }
    /// The transfer that waits for this one to have left.
    [[nodiscard]] At fifo_successor(At a) const {
        return a.step + 1 >= steps_ || phase_start(a.step + 1) ? nowhere : At{a.step + 1, a.slot};
    }
    [[nodiscard]] std::uint64_t fifo_successor(std::uint64_t local) const {
        return local_or_none(fifo_successor(at(local)));
    }
    /// The first-step transfers that `member` sends or receives, in index order, into `out` (at most 4).
    std::uint32_t first_step_transfers(std::uint32_t member, std::uint64_t out[4]) const;
    /// Transfers `member` sends or receives over the whole schedule.
    [[nodiscard]] std::uint64_t member_transfers(std::uint32_t member) const;
    /// Appends the same transfers, listed, to `plan` (append_ring per phase).
    void expand_into(CollectivePlan& plan) const;
    /// The heap memory its vectors hold.
    [[nodiscard]] std::size_t capacity_bytes() const {
        return (order.capacity() + position_.capacity() + phase_starts_.capacity()) * sizeof(std::uint32_t) +
               phases.capacity() * sizeof(RingPhase);
    }

private:
    [[nodiscard]] std::uint64_t local_or_none(At a) const { return exists(a) ? local_of(a) : none; }
    [[nodiscard]] bool phase_start(std::uint32_t step) const {
        return std::find(phase_starts_.begin(), phase_starts_.end(), step) != phase_starts_.end();
    }
    std::vector<std::uint32_t> position_;  // by member: its position in `order`
    std::uint32_t steps_ = 0;
    std::vector<std::uint32_t> phase_starts_;  // first step of each phase
    std::uint64_t piece_ = 0;                  // bytes / n: the smaller pieces
    std::uint32_t larger_pieces_ = 0;          // bytes % n: pieces 0 .. larger_pieces_ - 1 carry one byte more
};

}  // namespace clustersim::sim
