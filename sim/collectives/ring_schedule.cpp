// Ring schedules: append_ring's transfers and dependencies as formulas of (step, slot) (see ring_schedule.h).
#include "sim/collectives/ring_schedule.h"

#include <algorithm>
#include <tuple>

#include "engine/error.h"
#include "sim/collectives/collective_algorithm.h"

namespace clustersim::sim {

void RingSchedule::prepare() {
    const std::uint32_t n = members();
    position_.assign(n, UINT32_MAX);
    for (std::uint32_t p = 0; p < n; ++p) {
        CLUSTERSIM_CHECK(order[p] < n && position_[order[p]] == UINT32_MAX,
                         "ring of {} positions visits member {} twice or names no member", n, order[p]);
        position_[order[p]] = p;
    }
    steps_ = 0;
    phase_starts_.clear();
    for (const RingPhase& p : phases) {
        phase_starts_.push_back(steps_);
        steps_ += p.steps;
    }
    // transfer() takes a step modulo n by one subtraction (where pieces differ, so only in a whole ring).
    const std::uint32_t whole_ring = std::max(members(), positions);
    CLUSTERSIM_CHECK(members() >= 2 && steps_ < 2 * whole_ring, "ring schedule of {} steps over {} members", steps_,
                     whole_ring);
    piece_ = bytes / members();
    larger_pieces_ = static_cast<std::uint32_t>(bytes % members());
    CLUSTERSIM_CHECK(positions <= members() || (larger_pieces_ == 0 && relay == UINT32_MAX),
                     "a ring folded by a shift needs equal pieces and no relay");
}

PlannedTransfer RingSchedule::transfer(At a) const {
    const std::uint32_t n = members();
    // Position i forwards piece (i - step) mod n (append_ring's offset is the steps before its phase); the relay's
    // hop and forward carry the last position's piece. Steps stay below 2n, so step mod n needs no division. Only
    // the first `bytes mod n` pieces are a byte larger: with equal pieces the piece's index does not matter.
    std::uint64_t extra = 0;
    if (larger_pieces_ > 0) {
        const std::uint32_t i = std::min(a.slot, n - 1);
        const std::uint32_t step_mod = a.step >= n ? a.step - n : a.step;
        const std::uint32_t piece = i >= step_mod ? i - step_mod : i + n - step_mod;
        extra = piece < larger_pieces_ ? 1 : 0;
    }
    PlannedTransfer t;
    t.bytes = whole ? bytes : piece_ + extra;
    t.step = a.step;
    std::size_t phase = 0;
    while (phase + 1 < phase_starts_.size() && a.step >= phase_starts_[phase + 1]) ++phase;
    // (The hop to the relay only moves the piece.)
    t.reduces = !phases.empty() && phases[phase].reduce && !(a.slot == n - 1 && relay != UINT32_MAX);
    std::tie(t.src, t.dst) = ends(a);
    return t;
}

std::pair<std::uint32_t, std::uint32_t> RingSchedule::ends(At a) const {
    const std::uint32_t n = members();
    if (a.slot == n) return {relay, order[0]};                                 // the relay's forward
    if (a.slot == n - 1 && relay != UINT32_MAX) return {order[n - 1], relay};  // the hop to the relay
    return {order[a.slot], order[a.slot + 1 == n ? 0 : a.slot + 1]};
}

RingSchedule::At RingSchedule::data_dependency(At a) const {
    const std::uint32_t n = members();
    if (a.slot == n) return {a.step, n - 1};  // the forward waits for its hop
    if (a.step == 0) return nowhere;
    // The transfer into this position one step earlier: from the previous position, or the relay's forward.
    return {a.step - 1, a.slot == 0 ? (relay != UINT32_MAX ? n : n - 1) : a.slot - 1};
}

RingSchedule::At RingSchedule::data_dependent(At a) const {
    const std::uint32_t n = members();
    if (a.slot == n - 1 && relay != UINT32_MAX) return {a.step, n};  // the hop's forward
    if (a.step + 1 >= steps_) return nowhere;
    // The next position's send one step later (the forward feeds position 0).
    return {a.step + 1, a.slot >= n - 1 ? 0 : a.slot + 1};
}

std::uint32_t RingSchedule::first_step_transfers(std::uint32_t member, std::uint64_t out[4]) const {
    const std::uint32_t n = members();
    std::uint32_t count = 0;
    const std::uint32_t p = position_[member];
    out[count++] = p;                                                  // its send (or hop to the relay)
    out[count++] = p > 0 ? p - 1 : (relay != UINT32_MAX ? n : n - 1);  // the send into it
    if (member == relay) {
        out[count++] = n - 1;  // the hop into the relay
        out[count++] = n;      // the relay's forward
    }
    std::sort(out, out + count);
    return static_cast<std::uint32_t>(std::unique(out, out + count) - out);
}

std::uint64_t RingSchedule::member_transfers(std::uint32_t member) const {
    // Every step, each member sends once and receives once; the relay also receives the hop and sends the forward.
    // (A member outside a ring folded by a shift has none.)
    if (member >= position_.size() && member != relay) return 0;
    return std::uint64_t{steps_} * (member == relay ? 4 : 2);
}

void RingSchedule::expand_into(CollectivePlan& plan) const {
    std::vector<std::uint32_t> after;
    std::uint32_t first_step = 0;
    for (const RingPhase& p : phases) {
        after = append_ring(plan, order, p.steps, bytes, whole, first_step, after, first_step, relay, p.reduce);
        first_step += p.steps;
    }
}

}  // namespace clustersim::sim
