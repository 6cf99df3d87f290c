// Ring schedules: append_ring's transfers and dependencies as formulas of (step, slot) (see ring_schedule.h).
#include "sim/collectives/ring_schedule.h"

#include <algorithm>

#include "sim/collectives/collective_algorithm.h"

namespace clustersim::sim {

std::uint32_t RingSchedule::steps() const {
    std::uint32_t total = 0;
    for (const RingPhase& p : phases) total += p.steps;
    return total;
}

bool RingSchedule::phase_start(std::uint32_t step) const {
    std::uint32_t start = 0;
    for (const RingPhase& p : phases) {
        if (step == start) return true;
        start += p.steps;
    }
    return false;
}

PlannedTransfer RingSchedule::transfer(std::uint64_t local) const {
    const std::uint32_t n = members(), w = width();
    const auto step = static_cast<std::uint32_t>(local / w), slot = static_cast<std::uint32_t>(local % w);
    // Position i forwards piece (i - step) mod n (append_ring's offset is the steps before its phase); the relay's
    // hop and forward carry the last position's piece.
    const std::uint32_t i = std::min(slot, n - 1);
    const std::uint32_t piece = (i + n - step % n) % n;
    PlannedTransfer t;
    t.bytes = whole ? bytes : share_of(bytes, n, piece);
    t.step = step;
    std::uint32_t start = 0;
    for (const RingPhase& p : phases) {
        if (step < start + p.steps) {
            t.reduces = p.reduce;
            break;
        }
        start += p.steps;
    }
    if (slot == n) {  // the relay's forward
        t.src = relay;
        t.dst = order[0];
    } else if (slot == n - 1 && relay != UINT32_MAX) {  // the hop to the relay only moves the piece
        t.src = order[n - 1];
        t.dst = relay;
        t.reduces = false;
    } else {
        t.src = order[slot];
        t.dst = order[(slot + 1) % n];
    }
    return t;
}

std::uint64_t RingSchedule::data_dependency(std::uint64_t local) const {
    const std::uint32_t n = members(), w = width();
    const std::uint64_t step = local / w, slot = local % w;
    if (slot == n) return local - 1;  // the forward waits for its hop
    if (step == 0) return none;
    // The transfer into this position one step earlier: from the previous position, or the relay's forward.
    const std::uint64_t into = slot == 0 ? (relay != UINT32_MAX ? n : n - 1) : slot - 1;
    return (step - 1) * w + into;
}

std::uint64_t RingSchedule::fifo_predecessor(std::uint64_t local) const {
    const std::uint32_t w = width();
    const auto step = static_cast<std::uint32_t>(local / w);
    return step == 0 || phase_start(step) ? none : local - w;
}

std::uint64_t RingSchedule::data_dependent(std::uint64_t local) const {
    const std::uint32_t n = members(), w = width();
    const std::uint64_t step = local / w, slot = local % w;
    if (slot == n - 1 && relay != UINT32_MAX) return local + 1;  // the hop's forward
    if (step + 1 >= steps()) return none;
    // The next position's send one step later (the forward feeds position 0).
    const std::uint64_t next = slot >= n - 1 ? 0 : slot + 1;
    return (step + 1) * w + next;
}

std::uint64_t RingSchedule::fifo_successor(std::uint64_t local) const {
    const std::uint32_t w = width();
    const auto step = static_cast<std::uint32_t>(local / w);
    return step + 1 >= steps() || phase_start(step + 1) ? none : local + w;
}

std::uint32_t RingSchedule::first_step_transfers(std::uint32_t member, std::uint64_t out[4]) const {
    const std::uint32_t n = members();
    std::uint32_t count = 0;
    const std::uint32_t p = position[member];
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
    return std::uint64_t{steps()} * (member == relay ? 4 : 2);
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
