// Links changing under running flows: degraded, failed, restored. The flows on the link are split out of their
// classes, re-capped or re-routed with the bytes they have left, and re-shared in this instant's update.
#include <algorithm>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/hash.h"
#include "sim/network/flow_network.h"

namespace clustersim::sim {

using engine::Time;

std::string FlowNetwork::describe_owner(std::uint32_t owner) const {
    return owner_names_.describe ? owner_names_.describe(owner_names_.context, owner)
                                 : fmt::format("flow owner {}", owner);
}

FlowNetwork::RouteCost FlowNetwork::route_cost(std::span<const topo::LinkId> route) const {
    RouteCost cost;
    cost.version = link_state_version_;
    for (const topo::LinkId l : route) {
        cost.latency += link_latency_[l.index()];
        const double bw = links_[l.index()].capacity;
        cost.bottleneck = cost.bottleneck == 0 ? bw : std::min(cost.bottleneck, bw);
    }
    return cost;
}

double FlowNetwork::set_cap(std::uint32_t flow, const RouteCost& cost) {
    CLUSTERSIM_CHECK(cost.version == link_state_version_, "a route's cost from before a link changed state");
    FlowShare& share = share_[flow];
    // One share's cap: the bottleneck split over the weight, so that the flow alone gets the bottleneck.
    share.cap = cost.bottleneck / share.weight;
    share.limiting_link = UINT32_MAX;
    return cost.bottleneck;
}

double FlowNetwork::set_cap_from_route(std::uint32_t flow, Time extra_latency, const RouteCost& cost) {
    flows_[flow].latency = extra_latency + cost.latency;
    return set_cap(flow, cost);
}

std::uint64_t FlowNetwork::detour_key(std::span<const topo::LinkId> route) {
    // The path it was on, not the flow's slot or owner: those depend on the order in which earlier flows ended (and
    // so on whether flows were solved in classes). Flows that shared a path share the detour.
    std::uint64_t key = route.size();
    for (const topo::LinkId l : route) key = engine::hash_combine(key, l.value);
    return key;
}

void FlowNetwork::reroute(std::uint32_t flow, const std::string& what) {
    FlowState& f = flows_[flow];
    const topo::DeviceId src = cluster_.link(f.route.front()).src, dst = cluster_.link(f.route.back()).dst;
    route_scratch_.clear();
    try {
        router_.route(src, dst, detour_key(f.route), route_scratch_);
    } catch (const engine::InputError&) {
        throw engine::InputError(fmt::format(
            "at {}: {}: no path left from '{}' to '{}' for {} ({} of {} bytes not sent); the run cannot go on",
            engine::format_time(sim_.now()), what, cluster_.device(src).name, cluster_.device(dst).name,
            describe_owner(flow_owner_[flow]), static_cast<std::uint64_t>(remaining_at(flow, sim_.now())), f.bytes));
    }
    f.route.assign(route_scratch_.begin(), route_scratch_.end());
}

void FlowNetwork::set_link_state(topo::LinkId link, double factor, const std::string& what) {
    CLUSTERSIM_CHECK(factor >= 0, "link factor {}", factor);
    const Time now = sim_.now();
    // Classes with a member on the link: their members no longer share one fate.
    std::vector<std::uint32_t> leaders;
    for (const LinkEntry& e : links_[link.index()].flows())
        if (share_[e.flow].group != no_class) leaders.push_back(classes_[share_[e.flow].group].members.front());
    std::sort(leaders.begin(), leaders.end());
    leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
    for (const std::uint32_t leader : leaders) split_class(leader, false);  // (each member is re-routed alone)
    set_capacity(link.value, cluster_.link(link).bandwidth_bytes_per_s * factor);
    solve_needed_ = true;
    ++link_state_version_;
    router_.set_link_down(link, factor == 0);
    const auto route_latency = [&](const FlowState& f) {
        Time sum{0};
        for (const topo::LinkId l : f.route) sum += link_latency_[l.index()];
        return sum;
    };
    // Flows sending on it, in slot order (a deterministic order, whatever the link's list order).
    std::vector<std::uint32_t> on_link;
    for (const LinkEntry& e : links_[link.index()].flows()) on_link.push_back(e.flow);
    std::sort(on_link.begin(), on_link.end());
    on_link.erase(std::unique(on_link.begin(), on_link.end()), on_link.end());
    for (const std::uint32_t flow : on_link) {
        account_progress(flow, now);
        detach(flow);
        const Time extra = flows_[flow].latency - route_latency(flows_[flow]);
        if (factor == 0) reroute(flow, what);
        set_cap_from_route(flow, extra);
        attach(flow);
    }
    // Flows that start in this instant are attached by the update: their routes and caps are fixed here (their
    // states written first, from what they started with).
    for (const Starting& start : starting_) materialize(start);
    for (Starting& start : starting_) {
        const std::uint32_t flow = start.flow;
        FlowState& f = flows_[flow];
        if (std::find(f.route.begin(), f.route.end(), link) == f.route.end()) continue;
        const Time extra = f.latency - route_latency(f);
        if (factor == 0) reroute(flow, what);
        set_cap_from_route(flow, extra);
        start = starting(flow);  // (its cap, latency and route as the classes will read them)
    }
    mark_dirty(link.value);
}

}  // namespace clustersim::sim
