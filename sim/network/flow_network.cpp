// Flow lifecycle in the network: start, drain (last byte leaves), arrival (last byte lands), and the
// bookkeeping of which flows sit on which links.
#include "sim/network/flow_network.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/hash.h"

namespace clustersim::sim {

using engine::Time;

FlowNetwork::FlowNetwork(const topo::Cluster& cluster, engine::Simulator& sim, NetworkOptions options)
    : cluster_(cluster), sim_(sim), options_(options), router_(cluster), shapes_(cluster.links().size()) {
    router_.set_two_level(options.two_level_routing);
    const std::size_t links = cluster.links().size();
    link_latency_.reserve(links);
    for (const topo::Link& l : cluster.links()) link_latency_.push_back(l.latency);
    links_.resize(links);
    for (std::size_t l = 0; l < links; ++l)
        set_capacity(static_cast<std::uint32_t>(l), cluster.links()[l].bandwidth_bytes_per_s);
    link_delay_units_.assign(links, 0);
    link_fill_.assign(links, LinkFill{});
    link_check_.assign(links, LinkCheck{});
    utilization_mark_.assign(links, 0);
    link_load_.assign(links, LinkLoad{});
    limit_mark_.assign(links, 0);
    timed_.assign(links, TimedLink{});
    if (options_.record_link_utilization) utilization_ = LinkUtilization(links);
}

std::uint32_t FlowNetwork::allocate_slot() {
    if (!free_slots_.empty()) {
        const std::uint32_t slot = free_slots_.back();
        free_slots_.pop_back();
        // Flows start in bursts (a class's members): the next slot's share, written long ago and evicted since, is
        // fetched while this one is filled. (Its state is written only if it leads or goes alone: not fetched.)
        if (!free_slots_.empty()) __builtin_prefetch(&share_[free_slots_.back()], 1);
        return slot;
    }
    const auto slot = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
    link_pos_.emplace_back();
    share_.emplace_back();
    flows_.back().timer = sim_.make_timer();
    if (timer_flow_.size() <= flows_.back().timer) timer_flow_.resize(flows_.back().timer + 1, UINT32_MAX);
    timer_flow_[flows_.back().timer] = slot;
    new_rate_.push_back(0);
    fixed_.push_back(0);
    new_limit_.push_back(UINT32_MAX);
    flow_start_.emplace_back();
    flow_ideal_.emplace_back();
    flow_owner_.push_back(0);
    flow_record_.push_back(UINT32_MAX);
    return slot;
}

FlowId FlowNetwork::start_flow(topo::DeviceId src, topo::DeviceId dst, std::uint64_t bytes, std::uint64_t flow_key,
                               std::uint32_t owner) {
    route_around_failures(src, dst, flow_key, owner);
    return start_flow_on_route(src, dst, route_scratch_, bytes, owner, 1);
}

void FlowNetwork::route_around_failures(topo::DeviceId src, topo::DeviceId dst, std::uint64_t flow_key,
                                        std::uint32_t owner) {
    route_scratch_.clear();
    try {
        router_.route(src, dst, flow_key, route_scratch_);
    } catch (const engine::InputError&) {
        if (router_.links_down() == 0) throw;
        throw engine::InputError(fmt::format(
            "at {}: with {} link(s) down, no path from '{}' to '{}' for {}", engine::format_time(sim_.now()),
            router_.links_down(), cluster_.device(src).name, cluster_.device(dst).name, describe_owner(owner)));
    }
}

FlowId FlowNetwork::start_flow_on_route(topo::DeviceId src, topo::DeviceId dst, std::span<const topo::LinkId> route,
                                        std::uint64_t bytes, std::uint32_t owner, std::uint32_t weight,
                                        Time extra_latency, const RouteCost* cost, std::uint32_t tap) {
    CLUSTERSIM_CHECK(weight >= 1, "flow of weight 0");
    // A route chosen before a link failed (a collective's channel routes): taken again around it.
    if (router_.links_down() > 0 &&
        std::any_of(route.begin(), route.end(), [&](topo::LinkId l) { return router_.link_down(l); })) {
        route_around_failures(src, dst, detour_key(route), owner);
        const std::vector<topo::LinkId> detour = route_scratch_;
        return start_flow_on_route(src, dst, detour, bytes, owner, weight, extra_latency, nullptr, tap);
    }
    if (!link_taps_.empty()) note_start(route, tap, bytes);
    const std::uint32_t slot = allocate_slot();
    FlowShare& share = share_[slot];
    share.rate = 0;
    share.weight = weight;
    share.group = no_class;
    const RouteCost route_cost_now = cost ? *cost : route_cost(route);
    const double bottleneck = set_cap(slot, route_cost_now);
    const Time latency = extra_latency + route_cost_now.latency;
    ++active_;
    started_bytes_ += bytes;
    const Time ideal =
        latency +
        (bytes == 0 || route.empty() ? Time{0} : engine::transfer_time(static_cast<double>(bytes), bottleneck));
    flow_start_[slot] = sim_.now();
    flow_ideal_[slot] = ideal;
    flow_owner_[slot] = owner;
    if (options_.record_flows) {
        flow_record_[slot] = static_cast<std::uint32_t>(records_.size());
        records_.push_back(FlowRecord{src, dst, bytes, owner, sim_.now(), Time{0}, ideal});
    }
    const bool moves = bytes > 0 && !route.empty();
    if (moves && options_.sharing == SharingModel::max_min && options_.flow_classes) {
        // Attached by this instant's update, in a class with the flows that start now and are like it. Its state is
        // written then, and only if it leads (starting_ holds what the update reads): a class's members' states are
        // not touched, here or when the class forms (their slots' lines stay out of the cache).
        const auto at = static_cast<std::uint32_t>(starting_routes_.size());
        starting_routes_.insert(starting_routes_.end(), route.begin(), route.end());
        starting_.push_back(
            {bytes, latency, share.cap, weight, slot, owner, at, static_cast<std::uint32_t>(route.size())});
        schedule_update();
        return FlowId{slot};
    }
    FlowState& f = flows_[slot];
    f.route.assign(route.begin(), route.end());
    f.bytes = bytes;
    f.remaining = static_cast<double>(bytes);
    f.last_update = f.rate_since = sim_.now();
    f.latency = latency;
    f.draining = false;
    if (!moves) {
        // Nothing to share: a local copy or an empty message drains at once and costs only the latency.
        sim_.arm(f.timer, sim_.now(), to_u16(EventKind::flow_drained));
    } else if (options_.sharing == SharingModel::contention_free) {
        share.rate = bottleneck;
        sim_.arm(f.timer, sim_.now() + engine::transfer_time(static_cast<double>(bytes), bottleneck),
                 to_u16(EventKind::flow_drained));
    } else {
        attach(slot);
    }
    return FlowId{slot};
}

void FlowNetwork::attach(std::uint32_t flow) {
    FlowState& f = flows_[flow];
    const FlowShare& share = share_[flow];
    f.draining = true;
    if (options_.incremental) attached_.push_back(flow);
    auto& link_pos = link_pos_[flow];
    link_pos.resize(attached_links(flow));
    const std::uint64_t units = demand_units(share);  // the same on every hop (a class: every member's)
    const RateUnits rate = rate_units(share.rate);    // (a flow re-attached keeps its rate until the update)
    std::uint32_t i = 0;
    for_each_link(
        flow, [&](std::uint32_t link, std::uint32_t count) __attribute__((always_inline)) {
            TimedLink& timed = timed_[link];
            if (timed.holds != 0) throw LinkHeld{topo::LinkId{link}};
            if (!timed.attached_once) {
                timed.attached_once = true;
                ++links_attached_;
            }
            link_pos[i] = links_[link].flow_count();
            links_[link].add_entry({flow, i, count});
            links_[link].demand_units += units * count;
            links_[link].headroom -= rate * count;
            if (may_bind(link)) solve_needed_ = true;
            mark_dirty(link);
            ++i;
        });
    count_held(flow, 1);
}

void FlowNetwork::detach(std::uint32_t flow) {
    FlowState& f = flows_[flow];
    f.draining = false;
    count_held(flow, -1);
    const auto& link_pos = link_pos_[flow];  // (an entry moved below may be another hop of this flow: read as written)
    const std::uint64_t units = demand_units(share_[flow]);
    const RateUnits rate = rate_units(share_[flow].rate);
    std::uint32_t i = 0;
    for_each_link(
        flow, [&](std::uint32_t link, std::uint32_t count) __attribute__((always_inline)) {
            if (may_bind(link)) solve_needed_ = true;  // a flow held here may rise
            links_[link].demand_units -= units * count;
            links_[link].headroom += rate * count;
            const std::uint32_t pos = link_pos[i++];
            const LinkEntry moved = links_[link].remove_entry(pos);
            // The entry moved into `pos` records its new position (it may be another hop of this same flow).
            link_pos_[moved.flow][moved.place] = pos;
            mark_dirty(link);
        });
}

void FlowNetwork::set_share_rate(std::uint32_t flow, double rate) {
    const RateUnits change = rate_units(rate) - rate_units(share_[flow].rate);
    share_[flow].rate = rate;
    for_each_link(flow, [&](std::uint32_t link, std::uint32_t count) { links_[link].headroom -= change * count; });
}

void FlowNetwork::count_held(std::uint32_t flow, std::int32_t delta) {
    for (const std::uint32_t l : held_links(flow)) links_[l].held_count += static_cast<std::uint32_t>(delta);
}

void FlowNetwork::audit() const {
    std::vector<std::uint32_t> held(links_.size(), 0);
    std::size_t attached = 0;
    for (std::uint32_t f = 0; f < flows_.size(); ++f) {
        if (!flows_[f].draining) continue;
        for (const std::uint32_t l : held_links(f)) ++held[l];
        // Each link it attaches to lists it where its places say, with its count there.
        std::uint32_t i = 0;
        for_each_link(f, [&](std::uint32_t l, std::uint32_t count) {
            const std::span<const LinkEntry> on_link = links_[l].flows();
            const std::uint32_t pos = link_pos_[f][i];
            CLUSTERSIM_CHECK(pos < on_link.size() && on_link[pos].flow == f && on_link[pos].place == i &&
                                 on_link[pos].count == count,
                             "link {}: flow slot {} not listed at its place {}", l, f, pos);
            ++i;
            ++attached;
        });
    }
    std::size_t listed = 0;
    for (std::uint32_t l = 0; l < links_.size(); ++l) {
        RateUnits sum = 0;
        for (const LinkEntry& e : links_[l].flows()) sum += rate_units(share_[e.flow].rate) * e.count;
        const RateUnits kept = capacity_units(l) - links_[l].headroom;
        CLUSTERSIM_CHECK(sum == kept, "link {}: kept rate sum {} bytes/s, its flows' {}", l, rate_of_units(kept),
                         rate_of_units(sum));
        CLUSTERSIM_CHECK(held[l] == links_[l].held_count, "link {}: kept {} flows held, its flows say {}", l,
                         links_[l].held_count, held[l]);
        listed += links_[l].flow_count();
    }
    // (Each attachment was found above, at a place of its own: as many entries as attachments are exactly those.)
    CLUSTERSIM_CHECK(listed == attached, "links list {} entries for {} attachments of draining flows", listed,
                     attached);
}

void FlowNetwork::mark_dirty(std::uint32_t link) {
    dirty_links_.push_back(link);
    schedule_update();
}

void FlowNetwork::schedule_update() {
    if (update_pending_) return;
    // One recompute per instant, after every start and end already scheduled for now.
    update_pending_ = true;
    sim_.schedule_at(sim_.now(), to_u16(EventKind::network_rate_update), 0);
}

void FlowNetwork::account_progress(std::uint32_t flow, engine::Time now) {
    FlowState& f = flows_[flow];
    const FlowShare& share = share_[flow];
    const double dt_ps = static_cast<double>((now - f.last_update).count());
    const double full = share.cap * share.weight;
    if (share.limiting_link != UINT32_MAX && share.rate < full) {
        const double lost_s = (full - share.rate) / full * dt_ps * 1e-12;
        if (share.group == no_class) {
            add_link_delay(share.limiting_link, lost_s);
        } else {
            // Each member is held by its own bottleneck link.
            for (const std::uint32_t l : classes_[share.group].member_limit) add_link_delay(l, lost_s);
        }
    }
    f.last_update = now;
}

double FlowNetwork::remaining_at(std::uint32_t flow, engine::Time now) const {
    const FlowState& f = flows_[flow];
    // Bytes sent since the rate last changed; rate * ps / 1e12 is exact for round figures.
    const double left = f.remaining - share_[flow].rate * static_cast<double>((now - f.rate_since).count()) / 1e12;
    return left < 1e-6 ? 0 : left;  // (rounding residue of a flow that is done now)
}

void FlowNetwork::settle(std::uint32_t flow, engine::Time now) {
    FlowState& f = flows_[flow];
    f.remaining = remaining_at(flow, now);
    f.rate_since = now;
}

void FlowNetwork::on_drained(std::uint32_t flow) {
    FlowState& f = flows_[flow];
    if (f.draining) {
        account_progress(flow, sim_.now());
        detach(flow);
    }
    f.remaining = 0;
    share_[flow].rate = 0;
    sim_.schedule_at(sim_.now() + f.latency, to_u16(EventKind::flow_arrived), flow);
}

void FlowNetwork::materialize(const Starting& s) {
    FlowState& f = flows_[s.flow];
    f.route.assign(starting_routes_.begin() + s.route_at, starting_routes_.begin() + s.route_at + s.hops);
    f.bytes = s.bytes;
    f.remaining = static_cast<double>(s.bytes);
    f.last_update = f.rate_since = sim_.now();
    f.latency = s.latency;
    f.draining = false;
}

void FlowNetwork::finish_arrival(std::uint32_t flow) {
    const FlowState& f = flows_[flow];
    if (options_.record_flows) records_[flow_record_[flow]].end = sim_.now();
    delivered_bytes_ += f.bytes;
    ++completed_;
    --active_;
    release_.push_back(flow);
    event_flows_.push_back(FlowId{flow});
    event_owners_.push_back(flow_owner_[flow]);
}

FlowNetwork::FlowEvent FlowNetwork::handle(const engine::Event& event) {
    // Slots of flows reported before are free from now on (the caller has read their owners).
    free_slots_.insert(free_slots_.end(), release_.begin(), release_.end());
    release_.clear();
    event_flows_.clear();
    event_owners_.clear();
    switch (static_cast<EventKind>(event.kind)) {
        case EventKind::flow_drained: {
            const std::uint32_t slot = timer_flow_[event.target];
            on_drained(slot);
            const std::uint32_t group = share_[slot].group;
            if (group == no_class) {
                event_flows_.push_back(FlowId{slot});
                event_owners_.push_back(flow_owner_[slot]);
            } else {
                for (const std::uint32_t m : classes_[group].members) event_flows_.push_back(FlowId{m});
                event_owners_.assign(classes_[group].owners.begin(), classes_[group].owners.end());
            }
            return {event_flows_, event_owners_, false};
        }
        case EventKind::network_rate_update:
            recompute_rates();
            return {};
        case EventKind::flow_arrived: {
            const std::uint32_t slot = event.target;
            const std::uint32_t group = share_[slot].group;
            if (group == no_class) {
                finish_arrival(slot);
            } else {
                // As finish_arrival for each member, without reading the members' states unless flows are recorded:
                // every member has the class's bytes (the class key), and the class keeps their owners.
                FlowClass& c = classes_[group];
                const auto n = static_cast<std::uint32_t>(c.members.size());
                delivered_bytes_ += flows_[slot].bytes * n;
                completed_ += n;
                active_ -= n;
                release_.insert(release_.end(), c.members.begin(), c.members.end());
                for (const std::uint32_t m : c.members) {
                    if (options_.record_flows) records_[flow_record_[m]].end = sim_.now();
                    event_flows_.push_back(FlowId{m});
                    share_[m].group = no_class;
                }
                event_owners_.assign(c.owners.begin(), c.owners.end());
                release_class(group);
                // The leader's route held every member's (a class without a shape), and its places every link's:
                // give the memory back rather than keep it in a slot a single flow will reuse.
                FlowState& head = flows_[slot];
                if (head.route.capacity() > 64) head.route.release();
                if (link_pos_[slot].capacity() > 64) link_pos_[slot].release();
            }
            return {event_flows_, event_owners_, true};
        }
        default:
            CLUSTERSIM_CHECK(false, "network given an event of kind {}", event.kind);
    }
    return {};
}

}  // namespace clustersim::sim
