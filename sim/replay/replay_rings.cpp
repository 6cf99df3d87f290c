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
    for (std::size_t r = 0; r < instances_[index].plan.rings().size(); ++r) {
        const RingSchedule& ring = instances_[index].plan.rings()[r];
        const std::uint64_t first = ring.first;
        const std::uint32_t count = ring.first_step_transfers(member, local);
        for (std::uint32_t k = 0; k < count; ++k) scheduled_condition_met(index, first + local[k]);
    }
}

void ReplayEngine::scheduled_condition_met(std::uint32_t index, std::uint64_t t) {
    Instance& inst = instances_[index];
    bool inserted = false;
    TransferState& state = inst.ring_states.find_or_insert(t, inserted);
    if (inserted) {
        // Its conditions, none met before this one (every condition is reported to the transfer it concerns).
        const RingSchedule& ring = inst.plan.ring_of(t);
        const RingSchedule::At at = ring.at(t - ring.first);
        state.pending = (ring.data_dependency(at) != RingSchedule::none ? 1U : 0U) +
                        (ring.fifo_predecessor(at) != RingSchedule::none ? 1U : 0U) + (at.step == 0 ? 2U : 0U);
        state.readers = static_cast<std::uint8_t>((ring.data_dependent(at) != RingSchedule::none ? 1 : 0) +
                                                  (ring.fifo_successor(at) != RingSchedule::none ? 1 : 0));
    }
    CLUSTERSIM_CHECK(state.pending > 0, "scheduled transfer {} met more conditions than it has", t);
    if (--state.pending == 0) start_transfer(index, t);
}

void ReplayEngine::start_scheduled(std::uint32_t index, std::uint64_t t) {
    Instance& inst = instances_[index];
    const RingSchedule& ring = inst.plan.ring_of(t);
    const RingSchedule::At at = ring.at(t - ring.first);
    const PlannedTransfer x = ring.transfer(at);
    CLUSTERSIM_CHECK(inst.members[x.src].valid() && inst.members[x.dst].valid(),
                     "scheduled transfer {} ready before its ends arrived", t);
    const std::uint64_t data = ring.data_dependency(at), fifo = ring.fifo_predecessor(at);
    Time ideal{0};
    const std::uint32_t flows = start_flows(index, t, x, data == RingSchedule::none, ideal);
    // Its dependencies' ideal ends, read once each; a dependency that has arrived and has no reader left goes.
    Time ready_ideal{0};
    for (const std::uint64_t d : {data, fifo}) {
        if (d == RingSchedule::none) continue;
        TransferState* before = inst.ring_states.find(ring.first + d);
        CLUSTERSIM_CHECK(before != nullptr && before->readers > 0, "scheduled transfer {} lost its dependency", t);
        ready_ideal = std::max(ready_ideal, before->ideal_done);
        if (--before->readers == 0 && before->done) inst.ring_states.erase(ring.first + d);
    }
    TransferState* state = inst.ring_states.find(t);
    state->flows_left = state->flows_unsent = flows;
    state->ideal_done = ideal_end(inst, x, ready_ideal, ideal);
}

void ReplayEngine::scheduled_drained(std::uint32_t index, std::uint64_t t) {
    Instance& inst = instances_[index];
    TransferState* state = inst.ring_states.find(t);
    if (--state->flows_unsent > 0) return;
    const RingSchedule& ring = inst.plan.ring_of(t);
    const std::uint64_t next = ring.fifo_successor(t - ring.first);
    if (next != RingSchedule::none) scheduled_condition_met(index, ring.first + next);
}

bool ReplayEngine::scheduled_flow_arrived(std::uint32_t index, std::uint64_t t) {
    return --instances_[index].ring_states.find(t)->flows_left == 0;
}

void ReplayEngine::finish_scheduled(std::uint32_t index, std::uint64_t t) {
    Instance& inst = instances_[index];
    const RingSchedule& ring = inst.plan.ring_of(t);
    const RingSchedule::At at = ring.at(t - ring.first);
    const std::uint64_t first = ring.first;
    const PlannedTransfer x = ring.transfer(at);
    const std::uint64_t dependent = ring.data_dependent(at);
    TransferState* state = inst.ring_states.find(t);
    state->done = true;
    if (state->readers == 0) inst.ring_states.erase(t);
    if (dependent != RingSchedule::none) scheduled_condition_met(index, first + dependent);
    transfer_done(index, x);
}

}  // namespace clustersim::sim
