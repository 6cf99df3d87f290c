// Collective calls that repeat an earlier call alone on their links (ReplayOptions::repeat_calls; models.md
// "Repeated calls"; architecture.md "Calls repeated from records").
//
// A call run as flows (planned, not timed in closed form) whose key its communicator has issued before is recorded
// through a network tap (flow_network.h, "Taps"): each member's arrival, end, busy time and ideal end, and what its
// flows did to each link they crossed. The key is what the call's transfers' sizes and costs depend on (kind, size,
// datatype, pipelining chunks, algorithm, protocol); its routes follow from its communicator. The record is kept if
// no other flow started or sent on one of its links while it ran, and every member ended after the last arrival:
// then the run depended only on its arrivals, sizes and routes, because max-min rates decompose over the components
// of flows coupled by shared links. The latest record of a key stands, confirmed when the one before it arrived alike.
//
// A later call with that key, whose record is confirmed and whose links are all free when it is planned (its first
// arrival), holds the links and checks each member's arrival against the record's offset; the last arrival commits
// it: each member's end is an event at the record's offset, the links get the record's rate steps and contention
// delay from the call's start. A member arriving at another offset, or still missing just after the record's last
// arrival (repeat_deadline), makes the replay start over with that call as flows; a flow that attaches to a held
// link throws FlowNetwork::LinkHeld and the replay starts over with the communicator's calls as flows, as for closed
// forms (replay_closed_form.cpp). Nothing of the call's flows can be rebuilt mid-way, hence the restarts, and hence
// a record is used only once its arrivals were seen twice in a row.
//
// Exactness: the record's times are the flows' own, shifted; the network's arithmetic reads only differences of times
// and integer sums (link rates, contention delays), so a repeat gives the flows' times to the picosecond and link
// figures to the bit, the busiest links' utilization bins to rounding (tests/sim/collectives/repeat_calls_test.cpp).
#include <algorithm>

#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

using engine::Time;

void ReplayEngine::plan_repeat(std::uint32_t index, const traces::Op& op, std::uint32_t chunks) {
    Instance& inst = instances_[index];
    const std::uint32_t comm = inst.comm.value;
    if (!repeats_on_ || flows_only_[comm] || !link_alias_.empty() || !calls_[inst.call].member_bytes.empty() ||
        inst.plan().size() == 0 ||
        std::any_of(inst.member_left.begin(), inst.member_left.end(), [](std::uint32_t n) { return n == 0; }))
        return;
    const RepeatKey key{comm,   op.collective,  op.dtype,      op.bytes(),
                        chunks, inst.algorithm, inst.protocol, inst.modelled_protocol};
    if (comm_repeats_.empty()) comm_repeats_.resize(g_.comms.size());
    const auto& kept = comm_repeats_[comm];
    const auto found = std::find_if(kept.begin(), kept.end(), [&](std::uint32_t r) { return repeats_[r].key == key; });
    if (found == kept.end()) {  // a key seen once is only noted: a run whose calls never repeat pays for no tap
        RepeatRecord placeholder;
        placeholder.key = key;
        comm_repeats_[comm].push_back(static_cast<std::uint32_t>(repeats_.size()));
        repeats_.push_back(std::move(placeholder));
        return;
    }
    const std::uint32_t r = *found;
    const RepeatRecord& record = repeats_[r];
    // Arrivals seen twice in a row (a call that repeats is likely to arrive as the last ones did; one that arrives
    // otherwise costs a restart), its links free now and not found shared by an earlier attempt of this replay;
    // else it runs as flows and is recorded again.
    const auto& links = record.net.links;
    if (record.recorded && record.confirmed && !no_repeat_[inst.call] && net_.links_free(links) &&
        std::none_of(links.begin(), links.end(), [&](topo::LinkId l) { return flows_only_links_[l.index()] != 0; })) {
        allocate_held_links();
        for (const topo::LinkId l : links) {
            net_.hold_link(l);
            closed_link_comm_[l.index()] = comm;
        }
        inst.held.assign(links.begin(), links.end());
        inst.repeat = r;
        ++repeats_[r].users;
        sim_.schedule_at(sim_.now() + record.last_arrival + Time{1}, to_u16(EventKind::repeat_deadline), inst.call);
        return;
    }
    if (repeat_bytes_ >= max_repeat_bytes) return;
    inst.tap = net_.open_tap();
    inst.recording = r;
    inst.member_end.assign(inst.members.size(), Time{0});
}

void ReplayEngine::repeat_member_arrived(std::uint32_t index, std::uint32_t member) {
    Instance& inst = instances_[index];
    const RepeatRecord& record = repeats_[inst.repeat];
    if (sim_.now() - inst.first_arrival != record.arrival[member]) {
        repeat_failed(index);
        return;
    }
    if (inst.arrived == inst.members.size()) commit_repeat(index);
}

void ReplayEngine::commit_repeat(std::uint32_t index) {
    Instance& inst = instances_[index];
    const RepeatRecord& record = repeats_[inst.repeat];
    const Time origin = inst.first_arrival;
    inst.repeat_committed = true;
    --repeats_[inst.repeat].users;
    ++repeated_calls_;
    inst.first_start = origin + record.first_start;
    inst.ideal = record.ideal;
    inst.end = origin + record.end;
    std::copy(record.member_busy.begin(), record.member_busy.end(), inst.member_busy.begin());
    std::copy(record.member_ideal.begin(), record.member_ideal.end(), inst.member_ideal.begin());
    for (std::uint32_t m = 0; m < inst.members.size(); ++m)
        schedule_member_end(index, m, origin + record.member_end[m], EventKind::repeat_done);
    net_.replay_tap(record.net, origin);
}

void ReplayEngine::repeat_deadline(std::uint32_t call) {
    const std::uint32_t index = calls_[call].slot;
    if (index == UINT32_MAX) return;  // (done)
    const Instance& inst = instances_[index];
    if (inst.repeat != UINT32_MAX && !inst.repeat_committed) repeat_failed(index);
}

void ReplayEngine::repeat_failed(std::uint32_t index) {
    Instance& inst = instances_[index];
    if (std::find(repeat_failures_.begin(), repeat_failures_.end(), inst.call) != repeat_failures_.end()) return;
    if (repeat_failures_.empty()) sim_.schedule_at(sim_.now(), to_u16(EventKind::repeat_failed), 0);
    repeat_failures_.push_back(inst.call);
}

void ReplayEngine::repeat_member_done(std::uint32_t handle) {
    const auto [index, member] = closed_done_[handle];
    free_closed_done_.push_back(handle);
    finish_member(index, member);
    Instance& inst = instances_[index];
    if (++inst.members_done < inst.members.size()) return;
    for (const topo::LinkId l : inst.held) net_.release_link(l);
    inst.held.clear();
    release_instance(index);
}

void ReplayEngine::close_recording(std::uint32_t index) {
    Instance& inst = instances_[index];
    const std::uint32_t tap = inst.tap;
    inst.tap = FlowNetwork::no_tap;
    const bool valid = net_.tap_valid(tap);
    const Time origin = inst.first_arrival;
    RepeatRecord record;
    net_.close_tap(tap, origin, record.net);
    if (!valid || inst.first_start.count() < 0) return;
    const std::size_t members = inst.members.size();
    record.arrival.resize(members);
    record.member_end.resize(members);
    for (std::size_t m = 0; m < members; ++m) {
        record.arrival[m] = inst.member_arrival[m] - origin;
        record.member_end[m] = inst.member_end[m] - origin;
    }
    record.last_arrival = inst.last_arrival - origin;
    // Every member's end after the last arrival: a repeat commits the ends then.
    if (*std::min_element(record.member_end.begin(), record.member_end.end()) < record.last_arrival) return;
    record.first_start = inst.first_start - origin;
    record.end = inst.end - origin;
    record.ideal = inst.ideal;
    record.member_busy.assign(inst.member_busy.begin(), inst.member_busy.end());
    record.member_ideal.assign(inst.member_ideal.begin(), inst.member_ideal.end());
    // The latest record of its key stands (confirmed when it arrived as the one before it).
    RepeatRecord& previous = repeats_[inst.recording];
    const std::size_t others = repeat_bytes_ - previous.bytes();
    if (previous.users > 0 || others + record.bytes() > max_repeat_bytes) return;
    record.key = previous.key;
    record.confirmed = previous.recorded && previous.arrival == record.arrival;
    record.recorded = true;
    repeat_bytes_ = others + record.bytes();
    previous = std::move(record);
}

}  // namespace clustersim::sim
