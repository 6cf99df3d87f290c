// Collective calls that repeat an earlier call alone on their links (ReplayOptions::repeat_calls; models.md
// "Repeated calls").
//
// A call run as flows is recorded (a network tap, flow_network.h "Taps") when it is planned and not timed in closed
// form: each member's end, busy time and ideal end, and what its flows did to each link they crossed. The record is
// kept if every member arrived at one instant and no other flow shared one of its links while it ran: then its run
// depended only on its starts, sizes and routes, because max-min rates decompose over the components of flows
// coupled by shared links. A later call of the same communicator with the same key (kind, size, datatype, plan
// chunks, algorithm and protocol: what its transfers' sizes and costs depend on; its routes follow from its
// communicator) whose links are all free when it is planned holds them, and at the end of its first instant, if every
// member has arrived, takes the record shifted to its start: each member's end is an event, the links get the
// record's rate steps and contention delay. A member still missing then makes it run as flows from that instant. A
// flow that attaches to a held link throws FlowNetwork::LinkHeld and the replay starts over with the communicator's
// calls as flows, as for closed forms (replay_closed_form.cpp).
//
// Exactness: the record's times are the flows' own, shifted; the network's arithmetic reads only differences of times
// and integer link sums, so the repeat is the flows' run to the picosecond unless a class of flows that start at one
// instant is formed in another order (the record's run and a repeat's flows meet other calls' flows in classes), which
// moves times by rounding; tests compare both ways (tests/sim/replay/repeat_calls_test.cpp).
#include <algorithm>

#include "engine/error.h"
#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

using engine::Time;

void ReplayEngine::plan_repeat(std::uint32_t index, const traces::Op& op, std::uint32_t chunks) {
    Instance& inst = instances_[index];
    const std::uint32_t comm = inst.comm.value;
    if (!repeats_on_ || flows_only_[comm] || !link_alias_.empty() || !calls_[inst.call].member_bytes.empty() ||
        inst.plan.size() == 0 ||
        std::any_of(inst.member_left.begin(), inst.member_left.end(), [](std::uint32_t n) { return n == 0; }))
        return;
    const RepeatKey key{comm,   op.collective,  op.dtype,      op.bytes,
                        chunks, inst.algorithm, inst.protocol, inst.modelled_protocol};
    if (comm_repeats_.empty()) comm_repeats_.resize(g_.comms.size());
    bool seen = false;
    for (const std::uint32_t r : comm_repeats_[comm]) {
        if (repeats_[r].key != key) continue;
        seen = true;
        const RepeatRecord& record = repeats_[r];
        // Arrivals seen twice in a row (a call that repeats is likely to arrive as the last ones did; one that
        // arrives otherwise costs a restart), its links free now and not found shared by an earlier attempt of
        // this replay; else it runs as flows and is recorded again.
        const auto& links = record.net.links;
        if (record.recorded && record.confirmed && !no_repeat_[inst.call] && net_.links_free(links) &&
            std::none_of(links.begin(), links.end(),
                         [&](topo::LinkId l) { return flows_only_links_[l.index()] != 0; })) {
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
        break;
    }
    if (!seen) {  // a key seen once is only noted: a run whose calls never repeat pays for no tap
        RepeatRecord placeholder;
        placeholder.key = key;
        comm_repeats_[comm].push_back(static_cast<std::uint32_t>(repeats_.size()));
        repeats_.push_back(std::move(placeholder));
        return;
    }
    if (repeat_bytes_ >= max_repeat_bytes) return;
    inst.tap = net_.open_tap();
    if (tap_keys_.size() <= inst.tap) tap_keys_.resize(inst.tap + 1);
    tap_keys_[inst.tap] = key;
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
    record.key = tap_keys_[tap];
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
    auto& kept = comm_repeats_[record.key.comm];
    for (const std::uint32_t r : kept) {
        if (repeats_[r].key != record.key) continue;
        const std::size_t others = repeat_bytes_ - repeats_[r].bytes();
        if (repeats_[r].users > 0 || others + record.bytes() > max_repeat_bytes) return;
        record.confirmed = repeats_[r].recorded && repeats_[r].arrival == record.arrival;
        record.recorded = true;
        repeat_bytes_ = others + record.bytes();
        repeats_[r] = std::move(record);
        return;
    }
    CLUSTERSIM_CHECK(false, "a call recorded with a key never seen before");
}

}  // namespace clustersim::sim
