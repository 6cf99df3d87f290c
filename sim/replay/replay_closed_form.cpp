// Collective calls timed in closed form. A call whose links no other traffic uses runs each transfer alone on its
// route, as long as its own transfers do not overlap on a link: the network would give each flow its cap from its
// start to its last byte, so its drain and arrival follow from formulas (network::alone_timing,
// sim/network/timed_flow.h), and a transfer starts when its conditions are met (a ring schedule's, replay_rings.cpp:
// both ends' arrival for the first step, the piece it forwards, its edge's previous send; or a listed plan's: its
// dependencies' arrival, its edge's previous send, its ends' arrival). The transfers are timed as soon as their
// conditions are known, earliest first, without events; each member's end is one event.
//
// Exactness. A call qualifies when its routes have no choice of paths, a ring's edges have links of their own, and
// none of its links has ever carried a flow; it then holds them until its last member is done. A flow attaching to
// a held link throws FlowNetwork::LinkHeld, and two calls timed on one link at overlapping times (or out of time
// order) are found as their transfers are committed: either way the replay starts over with those communicators'
// calls as flows (replay() in replay_engine.cpp), so the result is always the one of a run in which every such
// call shared nothing. A call whose own transfers overlap on a link goes on as flows (at once if found in its first
// instant, else by starting over). What the outputs read is the same as from flows: each member's end, busy time
// (the union of its transfers' spans), ideal end and contention; what each link carried; the flows and bytes.
#include <algorithm>

#include <fmt/format.h>

#include "engine/error.h"
#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

using engine::Time;

namespace {
// Transfers of one call timed in closed form at most (about 110 bytes each while it is timed: 7 MB). Larger rings
// run as flows: their steps form classes of identical flows (one event per step), which cost less per transfer
// than timing them one by one (a 1 MiB all-reduce over a ring of 1,024 GPUs, 2.1 M transfers: 0.35 s and 28 MB as
// flows, 1.24 s and 254 MB in closed form; docs/performance.md).
constexpr std::uint64_t max_closed_transfers = std::uint64_t{1} << 16;
}  // namespace

void ReplayEngine::run_as_flows(const std::vector<std::uint8_t>& comms, const std::vector<std::uint8_t>& links,
                                bool all, const std::vector<std::uint8_t>& no_repeat) {
    no_repeat_ = no_repeat;
    no_repeat_.resize(calls_.size(), 0);
    flows_only_ = comms;
    flows_only_.resize(g_.comms.size(), 0);
    flows_only_links_ = links;
    flows_only_links_.resize(cluster_.links().size(), 0);
    closed_form_ = options_.closed_form && !all && options_.network.sharing == SharingModel::max_min &&
                   !options_.network.record_flows && options_.cluster_events.empty();
    repeats_on_ = options_.repeat_calls && !all && options_.network.sharing == SharingModel::max_min &&
                  !options_.network.record_flows && options_.cluster_events.empty() && !options_.variability.active();
}

void ReplayEngine::closed_conflict(std::vector<std::uint32_t> comms, topo::LinkId link, std::string what) const {
    std::sort(comms.begin(), comms.end());
    comms.erase(std::unique(comms.begin(), comms.end()), comms.end());
    throw ClosedFormConflict{std::move(comms), link, std::move(what)};
}

void ReplayEngine::allocate_held_links() {
    if (!closed_busy_until_.empty()) return;
    closed_busy_until_.assign(cluster_.links().size(), Time{0});
    closed_link_comm_.assign(cluster_.links().size(), UINT32_MAX);
    link_stamp_.assign(cluster_.links().size(), 0);
    stage_drained_.assign(cluster_.links().size(), Time{0});
    stage_call_.assign(cluster_.links().size(), UINT32_MAX);
}

void ReplayEngine::schedule_member_end(std::uint32_t index, std::uint32_t member, Time at, EventKind kind) {
    std::uint32_t handle;
    if (!free_closed_done_.empty()) {
        handle = free_closed_done_.back();
        free_closed_done_.pop_back();
        closed_done_[handle] = {index, member};
    } else {
        handle = static_cast<std::uint32_t>(closed_done_.size());
        closed_done_.emplace_back(index, member);
    }
    sim_.schedule_at(at, to_u16(kind), handle);
}

bool ReplayEngine::try_closed_form(std::uint32_t index, const traces::Op& op, std::uint32_t chunks) {
    Instance& inst = instances_[index];
    const std::uint32_t comm = inst.comm.value;
    if (!closed_form_ || flows_only_[comm] || inst.plan().size() > max_closed_transfers || shift_folded_) return false;
    allocate_held_links();
    // A ring call of one size for all, each member with transfers, may be timed from (or recorded as) a record of
    // its key (replay_closed_records.cpp).
    const auto& rings = inst.plan().rings();
    const bool recordable =
        repeats_on_ && inst.plan().scheduled() && link_alias_.empty() && calls_[inst.call].member_bytes.empty() &&
        std::none_of(rings.begin(), rings.end(), [](const RingSchedule& r) { return r.relay != UINT32_MAX; }) &&
        std::none_of(inst.member_left.begin(), inst.member_left.end(), [](std::uint32_t n) { return n == 0; });
    const RepeatKey key{comm,   op.collective,  op.dtype,      op.bytes(),
                        chunks, inst.algorithm, inst.protocol, inst.modelled_protocol};
    if (recordable && use_closed_record(index, key)) return true;
    // Every route without a choice of paths (one flow per transfer), on links that never carried a flow; a ring's
    // edges on links of their own (edges of one ring send at once: sharing a link, they would share it).
    const auto& ranks = g_.comms[comm].ranks;
    ++stamp_;
    std::vector<topo::LinkId>& links = inst.held;  // (the slot keeps its buffer; empty unless the call qualifies)
    links.clear();
    const auto usable = [&](const RouteView& view, bool own) {
        if (view.kept == nullptr || view.multipath) return false;
        for (const topo::LinkId l : view.links) {
            if (!net_.link_unused(l) || flows_only_links_[l.index()]) return false;
            if (link_stamp_[l.index()] == stamp_) {
                if (own) return false;
                continue;
            }
            link_stamp_[l.index()] = stamp_;
            links.push_back(l);
        }
        return true;
    };
    const auto qualifies = [&] {
        for (const RingSchedule& ring : inst.plan().rings()) {
            for (std::uint32_t slot = 0; slot < ring.width(); ++slot) {
                const PlannedTransfer x = ring.transfer(RingSchedule::At{0, slot});
                if (x.src == switch_endpoint || x.dst == switch_endpoint) return false;
                if (!usable(route_once(gpu_of(ranks[x.src]), gpu_of(ranks[x.dst]), 0, route_scratch_,
                                       &inst.slot_routes[ring.first_slot + slot]),
                            true))
                    return false;
            }
        }
        if (!inst.plan().scheduled()) {
            for (std::uint64_t t = 0; t < inst.plan().size(); ++t) {
                const ClosedView v = closed_view(index, t);
                if (!v.src.valid() || !v.dst.valid() || !usable(route_once(v.src, v.dst, 0, route_scratch_), false))
                    return false;
            }
        }
        return true;
    };
    if (!qualifies()) {
        links.clear();  // (nothing held: release_instance and closed_form_to_flows release what `held` lists)
        return false;
    }
    for (const topo::LinkId l : links) {
        net_.hold_link(l);
        closed_link_comm_[l.index()] = comm;
    }
    inst.closed_form = true;
    ++closed_calls_;
    prepare_closed(index);
    if (recordable && repeat_bytes_ < max_repeat_bytes &&
        (comm_closed_records_.size() <= comm ||
         std::none_of(comm_closed_records_[comm].begin(), comm_closed_records_[comm].end(),
                      [&](const auto& k) { return k.key == key; }))) {
        inst.closed_recording = true;
        inst.closed_key = key;
    }
    return true;
}

void ReplayEngine::prepare_closed(std::uint32_t index) {
    Instance& inst = instances_[index];
    const auto& ranks = g_.comms[inst.comm.index()].ranks;
    // Each transfer's conditions, as replay_rings.cpp (or plan_instance, for a listed plan) counts them; each
    // member's spans, one per transfer.
    inst.closed.assign(static_cast<std::size_t>(inst.plan().size()), ClosedTransfer{});
    for (const RingSchedule& ring : inst.plan().rings()) {
        for (std::uint64_t local = 0; local < ring.size(); ++local) {
            const RingSchedule::At at = ring.at(local);
            inst.closed[ring.first + local].pending = (RingSchedule::exists(ring.data_dependency(at)) ? 1U : 0U) +
                                                      (RingSchedule::exists(ring.fifo_predecessor(at)) ? 1U : 0U) +
                                                      (at.step == 0 ? 2U : 0U);
        }
    }
    if (!inst.plan().scheduled()) {
        for (std::size_t t = 0; t < inst.closed.size(); ++t) inst.closed[t].pending = inst.pending[t];
    }
    const std::size_t members = ranks.size();
    inst.span_offsets.assign(members + 1, 0);
    for (std::size_t m = 0; m < members; ++m) inst.span_offsets[m + 1] = inst.span_offsets[m] + inst.member_left[m];
    inst.spans.resize(inst.span_offsets[members]);
    inst.member_end.assign(members, Time{0});
    inst.edge_costs.assign(inst.plan().scheduled() ? inst.plan().slots() : 0, EdgeCost{});
    inst.members_done = 0;
}

void ReplayEngine::closed_member_arrived(std::uint32_t index, std::uint32_t member) {
    Instance& inst = instances_[index];
    if (inst.closed_record != UINT32_MAX) {
        closed_record_arrived(index, member);
        return;
    }
    inst.arrival_order.push_back(member);
    std::uint64_t local[4];
    for (const RingSchedule& ring : inst.plan().rings()) {
        const std::uint32_t count = ring.first_step_transfers(member, local);
        for (std::uint32_t k = 0; k < count; ++k) closed_condition_met(index, ring.first + local[k], sim_.now());
    }
    if (!inst.plan().scheduled()) {
        for (std::uint32_t k = inst.member_offsets[member]; k < inst.member_offsets[member + 1]; ++k)
            closed_condition_met(index, inst.member_transfers[k], sim_.now());
    }
    time_ready_transfers(index);
}

void ReplayEngine::closed_condition_met(std::uint32_t index, std::uint64_t t, Time at) {
    ClosedTransfer& c = instances_[index].closed[t];
    CLUSTERSIM_CHECK(c.pending > 0, "closed-form transfer {} met more conditions than it has", t);
    c.ready = std::max(c.ready, at);
    if (--c.pending > 0) return;
    closed_ready_.emplace_back(c.ready, t);
    std::push_heap(closed_ready_.begin(), closed_ready_.end(), std::greater<>{});
}

void ReplayEngine::time_ready_transfers(std::uint32_t index) {
    // Earliest first, so that each edge's and each link's transfers are timed in time order (and overlaps show as
    // such). Staged, and committed at the end of the instant (commit_closed_call): a call whose own transfers
    // overlap on an edge (a phase's first send before the last one of the phase before it has left) in the timings
    // of its first instant, before anything of it was committed, goes on as flows.
    Instance& inst = instances_[index];
    while (!closed_ready_.empty()) {
        std::pop_heap(closed_ready_.begin(), closed_ready_.end(), std::greater<>{});
        const std::uint64_t t = closed_ready_.back().second;
        closed_ready_.pop_back();
        if (!stage_closed(index, t)) {
            if (inst.first_start.count() >= 0)
                closed_conflict({inst.comm.value}, topo::LinkId{},
                                "a call timed in closed form sends twice at once on one link");
            closed_form_to_flows(index);
            return;
        }
    }
    if (!inst.staged.empty() && !inst.commit_pending) {
        inst.commit_pending = true;
        sim_.schedule_at(sim_.now(), to_u16(EventKind::closed_form_commit), index);
    }
}

void ReplayEngine::commit_closed_call(std::uint32_t index) {
    Instance& inst = instances_[index];
    inst.commit_pending = false;
    if (inst.closed_form && inst.closed_record != UINT32_MAX) {
        commit_closed_record(index);
        return;
    }
    if (!inst.closed_form || inst.staged.empty()) return;  // (gone to flows since, or its slot a new call's)
    const bool first = inst.first_start.count() < 0;
    if (first) {  // the call's first start: the earliest of its first timings
        inst.first_start = inst.staged.front().start;
        for (const StagedTransfer& s : inst.staged) inst.first_start = std::min(inst.first_start, s.start);
    }
    // Recorded when all of it is committed now, its members all in at this instant.
    const bool record = inst.closed_recording && first && inst.arrived == inst.members.size() &&
                        inst.first_arrival == sim_.now() && inst.staged.size() == inst.transfers_left;
    inst.closed_recording = false;
    if (record) {
        record_closed_commit(index, inst.staged);
    } else {
        for (const StagedTransfer& s : inst.staged) commit_closed(index, s);
    }
    inst.staged.clear();
}

ReplayEngine::ClosedView ReplayEngine::closed_view(std::uint32_t index, std::uint64_t t) {
    Instance& inst = instances_[index];
    const auto& ranks = g_.comms[inst.comm.index()].ranks;
    ClosedView v;
    if (inst.plan().scheduled()) {
        const RingSchedule& ring = inst.plan().ring_of(t);
        const RingSchedule::At at = ring.at(t - ring.first);
        v.x = ring.transfer(at);
        v.slot = ring.first_slot + at.slot;
        v.slot_route = &inst.slot_routes[v.slot];
        v.first_of_call = !RingSchedule::exists(ring.data_dependency(at));
    } else {
        v.x = inst.plan().transfers()[t];
        v.first_of_call = inst.plan().after(t).empty();
    }
    // (As start_flows: a switch end is the NVSwitch of the GPU at the other end.)
    v.src = v.x.src == switch_endpoint ? node_switch(gpu_of(ranks[v.x.dst])) : gpu_of(ranks[v.x.src]);
    v.dst = v.x.dst == switch_endpoint ? node_switch(gpu_of(ranks[v.x.src])) : gpu_of(ranks[v.x.dst]);
    return v;
}

bool ReplayEngine::stage_closed(std::uint32_t index, std::uint64_t t) {
    Instance& inst = instances_[index];
    const ClosedView v = closed_view(index, t);
    const PlannedTransfer& x = v.x;
    const RouteView view = route_once(v.src, v.dst, 0, route_scratch_, v.slot_route);
    CLUSTERSIM_CHECK(view.kept != nullptr, "closed-form transfer {} lost its kept route", t);
    // As start_flows would start it: one flow of all its channels' shares on its only path. A ring's edge sends
    // pieces of one or two sizes: the cost of the last one is kept.
    EdgeCost scratch;
    EdgeCost& edge = v.slot != UINT32_MAX ? inst.edge_costs[v.slot] : scratch;
    if (edge.bytes != x.bytes || edge.first_of_call != v.first_of_call || edge.reduces != x.reduces) {
        const std::uint32_t channels =
            x.bytes == 0 || inst.plan().channels_planned ? 1 : std::max<std::uint32_t>(1, options_.channels);
        edge.cost = protocol_cost(inst, x, x.bytes, share_of(x.bytes, channels, 0), v.first_of_call, v.src, v.dst,
                                  view.links, view.kept);
        edge.timing =
            network::alone_timing(edge.cost.bytes, channels, view.kept->cost, edge.cost.extra, view.links.empty());
        edge.bytes = x.bytes;
        edge.first_of_call = v.first_of_call;
        edge.reduces = x.reduces;
    }
    const Time start = inst.closed[t].ready;
    const Time drained = start + edge.timing.sending, arrived = drained + edge.timing.latency;
    // Its links free of the call's earlier transfers (timed earliest first: the last one on a link is the latest).
    for (const topo::LinkId l : view.links) {
        if (stage_call_[l.index()] == inst.call && start < stage_drained_[l.index()]) return false;
    }
    for (const topo::LinkId l : view.links) {
        stage_call_[l.index()] = inst.call;
        stage_drained_[l.index()] = drained;
    }
    StagedTransfer& staged = inst.staged.emplace_back();
    staged = {t,     start, drained,           arrived,          edge.timing.ideal, edge.timing.rate, edge.cost.bytes,
              x.src, x.dst, view.kept->offset, view.kept->length};
    if (!inst.plan().scheduled()) staged.waits_for[0] = x.after_sent == no_transfer ? UINT64_MAX : x.after_sent;
    // Its dependents' conditions: the next send on its edge once it has left, the transfers waiting for its data.
    if (inst.plan().scheduled()) {
        const RingSchedule& ring = inst.plan().ring_of(t);
        const RingSchedule::At at = ring.at(t - ring.first);
        for (int k = 0; k < 2; ++k) {
            const RingSchedule::At d = k == 0 ? ring.data_dependency(at) : ring.fifo_predecessor(at);
            if (RingSchedule::exists(d)) staged.waits_for[k] = ring.first + ring.local_of(d);
        }
        if (const RingSchedule::At next = ring.fifo_successor(at); RingSchedule::exists(next))
            closed_condition_met(index, ring.first + ring.local_of(next), drained);
        if (const RingSchedule::At dependent = ring.data_dependent(at); RingSchedule::exists(dependent))
            closed_condition_met(index, ring.first + ring.local_of(dependent), arrived);
    } else {
        if (inst.fifo_next[t] != no_transfer) closed_condition_met(index, inst.fifo_next[t], drained);
        for (std::uint32_t k = inst.dependent_offsets[t]; k < inst.dependent_offsets[t + 1]; ++k)
            closed_condition_met(index, inst.dependents[k], arrived);
    }
    return true;
}

void ReplayEngine::closed_link_conflict(std::uint32_t comm, topo::LinkId l) const {
    closed_conflict({comm, closed_link_comm_[l.index()]}, l,
                    fmt::format("two calls timed in closed form on link {} at once", l.value));
}

void ReplayEngine::claim_closed_link(std::uint32_t index, topo::LinkId l, Time start, Time drained) {
    const std::uint32_t comm = instances_[index].comm.value;
    Time& busy = closed_busy_until_[l.index()];
    if (start < busy) [[unlikely]]
        closed_link_conflict(comm, l);
    busy = drained;
    closed_link_comm_[l.index()] = comm;
}

void ReplayEngine::commit_timed_transfer(std::uint32_t index, const ClosedRecord::Transfer& x, Time origin) {
    const std::span<const topo::LinkId> links(route_pool_.data() + x.route_offset, x.route_length);
    for (const topo::LinkId l : links) claim_closed_link(index, l, origin + x.start, origin + x.drained);
    net_.add_timed_flow(links, x.bytes, x.rate, origin + x.start, origin + x.drained);
}

void ReplayEngine::commit_closed(std::uint32_t index, const StagedTransfer& s) {
    Instance& inst = instances_[index];
    commit_timed_transfer(index, {s.route_offset, s.route_length, s.bytes, s.rate, s.start, s.drained}, Time{0});
    // Its end on an empty network, after those of the transfers it waited for (as start_scheduled, start_transfer).
    Time ready_ideal{0};
    for (const std::uint64_t d : s.waits_for) {
        if (d != UINT64_MAX) ready_ideal = std::max(ready_ideal, inst.closed[d].ideal_done);
    }
    if (!inst.plan().scheduled()) {
        for (const std::uint32_t d : inst.plan().after(s.transfer))
            ready_ideal = std::max(ready_ideal, inst.closed[d].ideal_done);
    }
    PlannedTransfer x;
    x.src = s.src;
    x.dst = s.dst;
    inst.closed[s.transfer].ideal_done = ideal_end(inst, x, ready_ideal, s.ideal);
    for (const std::uint32_t m : {x.src, x.dst}) {
        if (m == switch_endpoint) continue;
        // (Its spans fill its share of `spans` from the front as its transfers left go down.)
        inst.spans[inst.span_offsets[m + 1] - inst.member_left[m]] = {s.start, s.arrived};
        inst.member_end[m] = std::max(inst.member_end[m], s.arrived);
        if (--inst.member_left[m] > 0) continue;
        schedule_member_end(index, m, inst.member_end[m], EventKind::closed_form_done);
    }
    --inst.transfers_left;
    inst.end = std::max(inst.end, s.arrived);
}

void ReplayEngine::closed_form_to_flows(std::uint32_t index) {
    // Nothing of the call was committed (all of it was timed at this instant): it runs as flows from here, its
    // members arriving again in their order (no transfer of it could start before now: it would have been timed
    // and committed at an earlier instant).
    Instance& inst = instances_[index];
    for (const topo::LinkId l : inst.held) net_.release_link(l);
    inst.held.clear();
    inst.closed_form = false;
    --closed_calls_;
    closed_ready_.clear();
    inst.staged.clear();
    std::vector<ClosedTransfer>().swap(inst.closed);
    const std::vector<std::uint32_t> arrived = std::move(inst.arrival_order);
    for (const std::uint32_t m : arrived) member_arrived_as_flows(index, m);
}

Time ReplayEngine::closed_busy(std::uint32_t index, std::uint32_t member) {
    Instance& inst = instances_[index];
    // The union of its transfers' spans (a flow run counts from its first start while any of the member's transfers
    // is in flight).
    const auto first = inst.spans.begin() + inst.span_offsets[member];
    const auto last = inst.spans.begin() + inst.span_offsets[member + 1];
    std::sort(first, last);
    Time busy{0}, open_start{0}, open_end{-1};
    for (auto it = first; it != last; ++it) {
        if (it->first > open_end) {
            if (open_end >= open_start) busy += open_end - open_start;
            open_start = it->first;
            open_end = it->second;
        } else {
            open_end = std::max(open_end, it->second);
        }
    }
    if (open_end >= open_start) busy += open_end - open_start;
    return busy;
}

void ReplayEngine::closed_member_done(std::uint32_t handle) {
    const auto [index, member] = closed_done_[handle];
    free_closed_done_.push_back(handle);
    Instance& inst = instances_[index];
    if (inst.closed_record == UINT32_MAX) inst.member_busy[member] = closed_busy(index, member);  // (else recorded)
    finish_member(index, member);
    if (++inst.members_done < inst.members.size()) return;
    for (const topo::LinkId l : inst.held) net_.release_link(l);
    release_instance(index);
}

}  // namespace clustersim::sim
