// Ring schedules in the replay (sim/collectives/ring_schedule.h): the transfers of a ring plan run exactly as a
// listed plan's would (the same conditions, met in the same order, so the same flows in the same order), but
// their state exists only from the first condition a transfer meets until it has arrived and its dependents have
// started. A transfer waits for: its first step, both ends' arrival; then the transfer it forwards (data) and, in
// one phase, its edge's previous send having left (FIFO). Later steps need no arrival check: their dependencies
// involve both ends, which have arrived (checked).
#include <algorithm>

#include "engine/error.h"
#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

using engine::Time;

void ReplayEngine::scheduled_member_arrived(std::uint32_t index, std::uint32_t member) {
    // The first-step transfers the member sends or receives, schedule by schedule, in plan order (as a listed
    // plan's member list is).
    std::uint64_t local[4];
    for (std::size_t r = 0; r < instances_[index].plan().rings().size(); ++r) {
        const RingSchedule& ring = instances_[index].plan().rings()[r];
        const std::uint32_t count = ring.first_step_transfers(member, local);
        for (std::uint32_t k = 0; k < count; ++k) scheduled_condition_met(index, ring, ring.at(local[k]));
    }
}

void ReplayEngine::scheduled_condition_met(std::uint32_t index, const RingSchedule& ring, RingSchedule::At at) {
    Instance& inst = instances_[index];
    bool inserted = false;
    TransferState& state = inst.ring_states.find_or_insert(ring.first_slot + at.slot, at.step, inserted);
    if (inserted) {
        // Its conditions, none met before this one (every condition is reported to the transfer it concerns).
        state.pending = (RingSchedule::exists(ring.data_dependency(at)) ? 1U : 0U) +
                        (RingSchedule::exists(ring.fifo_predecessor(at)) ? 1U : 0U) + (at.step == 0 ? 2U : 0U);
        state.readers = static_cast<std::uint8_t>((RingSchedule::exists(ring.data_dependent(at)) ? 1 : 0) +
                                                  (RingSchedule::exists(ring.fifo_successor(at)) ? 1 : 0));
    }
    CLUSTERSIM_CHECK(state.pending > 0, "scheduled transfer ({}, {}) met more conditions than it has", at.step,
                     at.slot);
    if (--state.pending == 0) start_scheduled(index, ring, at);
}

void ReplayEngine::start_scheduled(std::uint32_t index, const RingSchedule& ring, RingSchedule::At at) {
    Instance& inst = instances_[index];
    const std::uint64_t t = ring.first + ring.local_of(at);
    const PlannedTransfer x = ring.transfer(at);
    CLUSTERSIM_CHECK(inst.members[x.src].valid() && inst.members[x.dst].valid(),
                     "scheduled transfer {} ready before its ends arrived", t);
    const RingSchedule::At data = ring.data_dependency(at), fifo = ring.fifo_predecessor(at);
    Time ideal{0};
    start_flows(index, t, x, !RingSchedule::exists(data), ideal, &inst.slot_routes[ring.first_slot + at.slot]);
    // Its dependencies' ideal ends, read once each; a dependency that has arrived and has no reader left goes.
    Time ready_ideal{0};
    for (const RingSchedule::At d : {data, fifo}) {
        if (!RingSchedule::exists(d)) continue;
        TransferState* before = inst.ring_states.find(ring.first_slot + d.slot, d.step);
        CLUSTERSIM_CHECK(before != nullptr && before->readers > 0, "scheduled transfer {} lost its dependency", t);
        ready_ideal = std::max(ready_ideal, before->ideal_done);
        if (--before->readers == 0 && before->done) inst.ring_states.erase(ring.first_slot + d.slot, d.step);
    }
    TransferState* state = inst.ring_states.find(ring.first_slot + at.slot, at.step);
    state->ideal_done = ideal_end(inst, x, ready_ideal, ideal);
}

void ReplayEngine::scheduled_drained(std::uint32_t index, std::uint64_t t) {
    Instance& inst = instances_[index];
    const RingSchedule& ring = inst.plan().ring_of(t);
    const RingSchedule::At at = ring.at(t - ring.first);
    const RingSchedule::At next = ring.fifo_successor(at);
    if (RingSchedule::exists(next)) scheduled_condition_met(index, ring, next);
}

void ReplayEngine::finish_scheduled(std::uint32_t index, std::uint64_t t) {
    Instance& inst = instances_[index];
    const RingSchedule& ring = inst.plan().ring_of(t);
    const RingSchedule::At at = ring.at(t - ring.first);
    const RingSchedule::At dependent = ring.data_dependent(at);
    TransferState* state = inst.ring_states.find(ring.first_slot + at.slot, at.step);
    state->done = true;
    if (state->readers == 0) inst.ring_states.erase(ring.first_slot + at.slot, at.step);
    if (RingSchedule::exists(dependent)) scheduled_condition_met(index, ring, dependent);
    const auto [src, dst] = ring.ends(at);
    transfer_done(index, src, dst);
}

}  // namespace clustersim::sim
