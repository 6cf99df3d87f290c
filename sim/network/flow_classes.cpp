// Classes of identical flows (see flow_network.h): formed from the flows that start at one instant, checked after
// every update that recomputes them, split in two when their common rate is not the max-min one (into their
// members when a link they cross changes state).
#include <algorithm>
#include <tuple>

#include "sim/network/flow_network.h"

namespace clustersim::sim {

using engine::Time;

void FlowNetwork::form_classes() {
    // Flows alike in bytes, latency, weight and cap end together if nothing tells them apart: order the flows
    // that start now by those (then by start order, so that the result does not depend on slot reuse) and make
    // a class of each run of equal ones.
    // (Often already in order: a ring step's transfers are all alike.)
    const auto by_key = [](const Starting& a, const Starting& b) { return a.class_key() < b.class_key(); };
    if (!std::is_sorted(starting_.begin(), starting_.end(), by_key))
        std::stable_sort(starting_.begin(), starting_.end(), by_key);
    for (std::size_t i = 0; i < starting_.size();) {
        std::size_t j = i + 1;
        while (j < starting_.size() && starting_[i].class_key() == starting_[j].class_key()) ++j;
        const std::uint32_t leader = starting_[i].flow;
        materialize(starting_[i]);
        if (j - i > 1) {
            class_members_.clear();
            for (std::size_t k = i; k < j; ++k) class_members_.push_back(starting_[k].flow);
            make_class(class_members_, &starting_[i]);
            ++classes_formed_;
            flows_in_classes_ += j - i;
        }
        attach(leader);
        i = j;
    }
    starting_.clear();
    starting_routes_.clear();
}

void FlowNetwork::make_class(std::span<const std::uint32_t> members, const Starting* starts) {
    // The first member leads: its route becomes every member's, one after the other; the others ride on it.
    std::uint32_t group;
    if (!free_classes_.empty()) {
        group = free_classes_.back();
        free_classes_.pop_back();
    } else {
        group = static_cast<std::uint32_t>(classes_.size());
        classes_.emplace_back();
    }
    FlowClass& c = classes_[group];
    c.members.assign(members.begin(), members.end());
    c.owners.resize(members.size());
    c.offsets.resize(members.size() + 1);
    std::size_t hops = 0;
    for (std::size_t k = 0; k < members.size(); ++k) {
        c.offsets[k] = static_cast<std::uint32_t>(hops);
        c.owners[k] = starts ? starts[k].owner : flow_owner_[members[k]];
        hops += starts ? starts[k].hops : flows_[members[k]].route.size();
    }
    c.offsets.back() = static_cast<std::uint32_t>(hops);
    c.member_limit.clear();
    c.next_limit.clear();
    c.limit_links.clear();
    // The members' routes one after the other: where the starting flows' copies already are so (in start order,
    // the usual case), or joined here.
    FlowState& head = flows_[members.front()];
    bool in_place = starts != nullptr;
    for (std::size_t k = 1; in_place && k < members.size(); ++k)
        in_place = starts[k].route_at == starts[k - 1].route_at + starts[k - 1].hops;
    std::span<const topo::LinkId> route;
    if (in_place) {
        route = {starting_routes_.data() + starts[0].route_at, hops};
    } else {
        joined_route_.clear();
        for (std::size_t k = 0; k < members.size(); ++k) {
            const std::span<const topo::LinkId> own =
                starts ? std::span<const topo::LinkId>(starting_routes_.data() + starts[k].route_at, starts[k].hops)
                       : std::span<const topo::LinkId>(flows_[members[k]].route);
            joined_route_.insert(joined_route_.end(), own.begin(), own.end());
        }
        route = joined_route_;
    }
    // The distinct links and their members, if two members share one: found, or built once for classes alike; the
    // class's route is then its shape's, and the leader keeps its own. Otherwise the leader's route becomes every
    // member's.
    c.shape = shapes_.shape_of(route, c.offsets);
    if (!c.shape) {
        head.route.reserve(hops);  // (one allocation for every member's route)
        head.route.append(route.data() + c.offsets[1], route.data() + hops);
    }
    for (std::size_t k = 1; k < members.size(); ++k) {
        if (!starts) flows_[members[k]].route.clear();
        share_[members[k]].group = group;
    }
    share_[members.front()].group = group;
    c.held.assign(attached_links(members.front()), 0);
}

bool FlowNetwork::class_exact(std::uint32_t leader) {
    // The common rate is every member's max-min rate when each member crosses a link that is saturated and on
    // which no flow has a higher share (its bottleneck): then every flow has one, which characterizes the max-min
    // allocation. Records each member's bottleneck, to charge it the delay it causes.
    FlowClass& c = classes_[share_[leader].group];
    const auto& route = flows_[leader].route;
    const double level = new_rate_[leader] / share_[leader].weight;
    c.next_limit.resize(c.members.size());  // (each member's written below)
    bool exact = true;  // (every member is looked at: a split keeps those held at the level together)
    const double most = level * (1 + 1e-9);  // the highest share a flow may have on the member's bottleneck
    // (Locals: the loads' stores below may alias the class's arrays and the route, as far as the compiler knows.)
    const topo::LinkId* const hops = route.data();
    const std::uint32_t stamp = exact_stamp_;
    const auto holds = [&](std::uint32_t l) {  // l is saturated and no flow on it has a higher share than the level
        // A link's load is the same for every class checked in this pass: summed once (split_inexact_classes).
        LinkLoad& load = link_load_[l];
        if (load.stamp != stamp) {
            double total = 0, max_level = 0;
            for (const LinkEntry& e : links_[l].flows()) {
                const double rate = share_[e.flow].mark == epoch_ ? new_rate_[e.flow] : share_[e.flow].rate;
                total += rate * e.count;
                max_level = std::max(max_level, rate / share_[e.flow].weight);
            }
            load = {max_level, stamp, total >= links_[l].capacity * (1 - 1e-9)};
        }
        return load.saturated && load.max_level <= most;
    };
    std::uint32_t* const next = c.next_limit.data();
    if (c.shape) {
        // Members share links: the links in ascending id order, each link's load read once, and its members that
        // have no bottleneck yet given it if it holds (so each member gets the lowest id that holds it, as below)
        // until every member has one.
        const network::ClassShape& shape = *c.shape;
        const std::size_t n = shape.by_id.size();
        const network::ClassShape::LinkMembers* const by_id = shape.by_id.data();
        const std::uint32_t* const crossing = shape.crossing.data();
        std::fill(next, next + c.members.size(), UINT32_MAX);
        std::size_t without = c.members.size();
        for (std::size_t i = 0; i < n && without > 0; ++i) {
            const std::uint32_t l = by_id[i].link;
            if (!holds(l)) continue;
            const std::uint32_t end =
                i + 1 < n ? by_id[i + 1].first : static_cast<std::uint32_t>(shape.crossing.size());
            for (std::uint32_t j = by_id[i].first; j < end; ++j) {
                std::uint32_t& limit = next[crossing[j]];
                if (limit != UINT32_MAX) continue;
                limit = l;
                --without;
            }
        }
        return without == 0;
    }
    // Each member's bottleneck adopted last (one of its links), where the class has them.
    const std::uint32_t* const previous = c.member_limit.size() == c.members.size() ? c.member_limit.data() : nullptr;
    for (std::size_t k = 0; k < c.members.size(); ++k) {
        // Of several links that hold the member, the lowest id, as the fill would pick among equal shares. Its last
        // bottleneck, if it still holds it, bounds the search: only its links with lower ids are read.
        std::uint32_t limit = previous && previous[k] != UINT32_MAX && holds(previous[k]) ? previous[k] : UINT32_MAX;
        const std::uint32_t end = c.offsets[k + 1];
        for (std::uint32_t hop = c.offsets[k]; hop < end; ++hop) {
            const std::uint32_t l = hops[hop].value;
            if (l < limit && holds(l)) limit = l;
        }
        next[k] = limit;
        exact = exact && limit != UINT32_MAX;
    }
    return exact;
}

void FlowNetwork::adopt_limits(std::uint32_t group) {
    FlowClass& c = classes_[group];
    if (c.next_limit == c.member_limit) return;  // the same bottlenecks (often: a held class's rate changed)
    // (The class is draining: its links' held counts follow.)
    for (const std::uint32_t l : c.limit_links) --links_[l].held_count;
    c.member_limit.swap(c.next_limit);
    // Each link once (marked by this pass), in the members' order.
    ++limit_stamp_;
    c.limit_links.clear();
    for (const std::uint32_t l : c.member_limit) {
        if (limit_mark_[l] == limit_stamp_) continue;
        limit_mark_[l] = limit_stamp_;
        c.limit_links.push_back(l);
        ++links_[l].held_count;
    }
    // Which of its links hold a member (held_by): those this pass marked.
    if (c.limit_links.empty()) {
        std::fill(c.held.begin(), c.held.end(), std::uint8_t{0});
        return;
    }
    std::uint32_t i = 0;
    for_each_link(c.members.front(),
                  [&](std::uint32_t l, std::uint32_t) { c.held[i++] = limit_mark_[l] == limit_stamp_ ? 1 : 0; });
}

bool FlowNetwork::split_inexact_classes() {
    to_split_.clear();
    ++exact_stamp_;  // links' loads summed afresh (no rate changes during the pass: classes split after it)
    for (const std::uint32_t f : component_flows_) {
        const std::uint32_t group = share_[f].group;
        if (group == no_class) continue;
        if (new_limit_[f] == UINT32_MAX) {
            classes_[group].next_limit.clear();  // at its cap: nothing holds any member
        } else if (!class_exact(f)) {
            to_split_.push_back(f);
        }
    }
    for (const std::uint32_t f : to_split_) split_class(f, true);
    return !to_split_.empty();
}

void FlowNetwork::split_class(std::uint32_t leader, bool in_two) {
    // in_two: the members that had a bottleneck at the class's level (class_exact) and those that had none part
    // ways: each part goes on as a class of its own, from the class's state (the same bytes left, rate and start),
    // and the solve that follows checks each again. A ring step whose transfers collide on a few spine links then
    // runs as two classes, not as thousands of flows. Otherwise, or when either part would be empty, every member
    // goes on alone.
    const Time now = sim_.now();
    account_progress(leader, now);
    detach(leader);
    FlowState& head = flows_[leader];
    const std::uint32_t group = share_[leader].group;
    FlowClass& c = classes_[group];
    split_parts_[0].clear();
    split_parts_[1].clear();
    for (std::size_t k = 0; k < c.members.size(); ++k) {
        const bool held = in_two && k < c.next_limit.size() && c.next_limit[k] != UINT32_MAX;
        split_parts_[held ? 0 : 1].push_back(c.members[k]);
    }
    FlowShare alone = share_[leader];
    alone.limiting_link = UINT32_MAX;
    const std::span<const topo::LinkId> route = class_route(c, leader);
    for (std::size_t k = 1; k < c.members.size(); ++k) {
        const std::uint32_t m = c.members[k];
        FlowState& member = flows_[m];
        member.route.assign(route.begin() + c.offsets[k], route.begin() + c.offsets[k + 1]);
        member.remaining = head.remaining;
        member.rate_since = head.rate_since;
        member.last_update = now;
        member.bytes = head.bytes;  // (the class's key: the same for every member; their states were not written)
        member.latency = head.latency;
        const std::uint32_t mark = share_[m].mark;  // its own selection stamp, not the leader's
        share_[m] = alone;
        share_[m].mark = mark;
        share_[m].group = no_class;
    }
    head.route.resize(c.offsets[1]);
    share_[leader].group = no_class;
    share_[leader].limiting_link = UINT32_MAX;
    release_class(group);
    ++classes_split_;
    if (split_parts_[0].empty() || split_parts_[1].empty()) {
        // Every member alone: the others first, then the leader, in the class's order.
        const auto& all = split_parts_[0].empty() ? split_parts_[1] : split_parts_[0];
        for (std::size_t k = 1; k < all.size(); ++k) attach(all[k]);
        attach(leader);
        return;
    }
    // (The leader is first in its part, so it leads it: its timer, the only one armed, stays with a leader.)
    for (const auto& part : split_parts_) {
        if (part.size() > 1) make_class(part);
        attach(part.front());
    }
}

void FlowNetwork::release_class(std::uint32_t group) {
    FlowClass& c = classes_[group];
    c.members.clear();
    c.shape.reset();  // (kept alive by its classes only, once the cache forgets it)
    free_classes_.push_back(group);
}

}  // namespace clustersim::sim
