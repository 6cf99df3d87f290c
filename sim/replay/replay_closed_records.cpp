// Closed-form calls timed from records (ReplayOptions::repeat_calls; models.md "Repeated calls"; architecture.md
// "Calls repeated from records").
//
// A ring call timed in closed form (replay_closed_form.cpp) whose members all arrive at one instant, and all of
// whose transfers are timed and committed at that instant, depends only on its key (kind, size, datatype, chunks,
// algorithm, protocol) and its routes, which its communicator fixes: the closed form reads the arrivals (all equal)
// and costs of the routes, nothing else. The first such call of a key on a communicator is recorded as it commits:
// each transfer's route, bytes, rate, start and drain (from the arrival), its members' ends in the order they were
// scheduled, their busy times and ideal ends, and the links it held.
//
// A later call of that key, whose links qualify as the closed form requires, holds them at its first arrival and is
// not timed: its members' arrivals are noted, and the instant's commit is scheduled where the closed form would
// have scheduled it (at the arrival that gives a ring's first-step transfer both its ends), so that every event of
// the instant keeps its place. At the commit, with every member in at this instant, the record's transfers are
// committed as the closed form commits them (the same checks against other closed-form calls on each link, the same
// link utilization, in the same order), and the members' ends are scheduled in the record's order. Otherwise the
// closed form is timed from the arrivals so far, each staged in its order as it would have been at its arrival,
// and committed: the call goes on as if it had never had a record.
#include <algorithm>

#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

using engine::Time;

bool ReplayEngine::use_closed_record(std::uint32_t index, const RepeatKey& key) {
    Instance& inst = instances_[index];
    const std::uint32_t comm = inst.comm.value;
    if (comm_closed_records_.size() <= comm) return false;
    const auto& kept = comm_closed_records_[comm];
    const auto found = std::find_if(kept.begin(), kept.end(), [&](const auto& k) { return k.key == key; });
    if (found == kept.end()) return false;
    ClosedRecord& record = closed_records_[found->record];
    // The closed form's own condition on links: none of them ever carried a flow, nor is to carry them only (which
    // is fixed for the run: found so once, it stays so while no link carries its first flow).
    if (record.unused_at != net_.links_attached()) {
        for (const topo::LinkId l : record.held) {
            if (!net_.link_unused(l) || flows_only_links_[l.index()]) return false;
        }
        record.unused_at = net_.links_attached();
    }
    inst.held.assign(record.held.begin(), record.held.end());
    for (const topo::LinkId l : inst.held) {
        net_.hold_link(l);
        closed_link_comm_[l.index()] = comm;
    }
    inst.closed_form = true;
    inst.closed_record = found->record;
    ++closed_calls_;
    return true;
}

void ReplayEngine::closed_record_arrived(std::uint32_t index, std::uint32_t member) {
    Instance& inst = instances_[index];
    inst.arrival_order.push_back(member);
    if (inst.commit_pending) return;
    // A ring's first-step transfer waits for its two ends only (replay_closed_form.cpp counts its conditions so):
    // the closed form stages it, and schedules the commit, at the arrival of the second.
    std::uint64_t local[4];
    for (const RingSchedule& ring : inst.plan().rings()) {
        const std::uint32_t count = ring.first_step_transfers(member, local);
        for (std::uint32_t k = 0; k < count; ++k) {
            const PlannedTransfer x = ring.transfer(ring.at(local[k]));
            if (!inst.members[x.src == member ? x.dst : x.src].valid()) continue;
            inst.commit_pending = true;
            sim_.schedule_at(sim_.now(), to_u16(EventKind::closed_form_commit), index);
            return;
        }
    }
}

void ReplayEngine::commit_closed_record(std::uint32_t index) {
    Instance& inst = instances_[index];
    if (inst.arrived == inst.members.size() && inst.first_arrival == sim_.now()) {
        const ClosedRecord& record = closed_records_[inst.closed_record];
        const Time origin = sim_.now();
        inst.first_start = origin + record.first_start;
        if (net_.timed_spans_fit(origin + record.last_drained)) {
            // Link by link: each link's claims and utilization read and write that link's state only (and no
            // link's bins widen meanwhile), so the order across links changes nothing; a conflict is found on the
            // link where transfer by transfer it would have been first (links in the order they were first
            // claimed, and only a link's first claim can meet another call's).
            for (const ClosedRecord::LinkGroup& g : record.links)
                claim_closed_link(index, g.link, origin + record.spans[g.first].start,
                                  origin + record.spans[g.first + g.count - 1].drained);
            for (const ClosedRecord::LinkGroup& g : record.links)
                net_.add_timed_spans(g.link, {record.spans.data() + g.first, g.count}, origin);
            net_.count_timed_flows(record.transfer_bytes, record.transfers.size());
        } else {
            for (const ClosedRecord::Transfer& x : record.transfers) commit_timed_transfer(index, x, origin);
        }
        inst.transfers_left = 0;
        inst.end = origin + record.end;
        inst.ideal = record.ideal;
        std::copy(record.member_busy.begin(), record.member_busy.end(), inst.member_busy.begin());
        std::copy(record.member_ideal.begin(), record.member_ideal.end(), inst.member_ideal.begin());
        for (const auto& [member, end] : record.ends)
            schedule_member_end(index, member, origin + end, EventKind::closed_form_done);
        ++closed_repeats_;
        return;
    }
    // Not every member in at this instant: the closed form from the arrivals so far, each staged as it would have
    // been as it arrived (this event is the instant's commit: what they stage is committed below).
    inst.closed_record = UINT32_MAX;
    prepare_closed(index);
    const std::vector<std::uint32_t> arrived = std::move(inst.arrival_order);
    inst.arrival_order.clear();
    inst.commit_pending = true;
    for (const std::uint32_t m : arrived) {
        if (inst.closed_form) {
            closed_member_arrived(index, m);
        } else {  // (its own transfers overlapped: gone to flows with the members before it)
            member_arrived_as_flows(index, m);
        }
    }
    commit_closed_call(index);
}

void ReplayEngine::group_by_link(ClosedRecord& record) const {
    const auto route = [&](const ClosedRecord::Transfer& x) {
        return std::span(route_pool_).subspan(x.route_offset, x.route_length);
    };
    for (const ClosedRecord::Transfer& x : record.transfers) {
        record.transfer_bytes += x.bytes;
        record.last_drained = std::max(record.last_drained, x.drained);
        for (const topo::LinkId l : route(x)) {
            if (std::none_of(record.links.begin(), record.links.end(), [&](const auto& g) { return g.link == l; }))
                record.links.push_back({l});
        }
    }
    for (ClosedRecord::LinkGroup& g : record.links) {
        g.first = static_cast<std::uint32_t>(record.spans.size());
        for (const ClosedRecord::Transfer& x : record.transfers) {
            const auto hops = route(x);
            if (std::find(hops.begin(), hops.end(), g.link) != hops.end())
                record.spans.push_back({x.start, x.drained, FlowNetwork::carried_rate(x.rate)});
        }
        g.count = static_cast<std::uint32_t>(record.spans.size()) - g.first;
    }
}

void ReplayEngine::record_closed_commit(std::uint32_t index, const std::vector<StagedTransfer>& staged) {
    Instance& inst = instances_[index];
    const Time origin = inst.first_arrival;
    const std::size_t members = inst.members.size();
    ClosedRecord record;
    record.key = inst.closed_key;
    record.transfers.reserve(staged.size());
    std::vector<std::uint8_t> ended(members, 0);
    for (const StagedTransfer& s : staged) {
        commit_closed(index, s);
        record.transfers.push_back(
            {s.route_offset, s.route_length, s.bytes, s.rate, s.start - origin, s.drained - origin});
        // (commit_closed schedules a member's end as its last transfer is committed: the source's, then the
        // destination's.)
        for (const std::uint32_t m : {s.src, s.dst}) {
            if (m == switch_endpoint || inst.member_left[m] != 0 || ended[m]) continue;
            ended[m] = 1;
            record.ends.emplace_back(m, inst.member_end[m] - origin);
        }
    }
    if (record.ends.size() != members) return;
    group_by_link(record);
    record.first_start = inst.first_start - origin;
    record.end = inst.end - origin;
    record.ideal = inst.ideal;
    record.member_ideal.assign(inst.member_ideal.begin(), inst.member_ideal.end());
    record.member_busy.resize(members);
    for (std::uint32_t m = 0; m < members; ++m) record.member_busy[m] = closed_busy(index, m);
    record.held.assign(inst.held.begin(), inst.held.end());
    if (repeat_bytes_ + record.bytes() > max_repeat_bytes) return;
    repeat_bytes_ += record.bytes();
    if (comm_closed_records_.empty()) comm_closed_records_.resize(g_.comms.size());
    comm_closed_records_[inst.comm.index()].push_back({record.key, static_cast<std::uint32_t>(closed_records_.size())});
    closed_records_.push_back(std::move(record));
}

}  // namespace clustersim::sim
