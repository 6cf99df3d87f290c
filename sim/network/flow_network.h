// The flow-level network: a transfer is a flow along its route; active flows share every link by max-min
// fairness (progressive filling). When flows start or end, rates are recomputed once per instant, and only for
// the flows connected to the touched links through shared links (a component), never globally.
//
// By default the update is incremental: it starts from the new flows and the flows that the touched links held
// below their caps, fills their rates with every other flow holding its rate, then adds each other flow whose
// max-min conditions the new rates break on a shared link (its bottleneck link no longer binds it, or a flow held on
// a link it crosses sits below it) and fills again, until no condition is broken. The result is a max-min fair
// allocation, found by touching a handful of flows. When no touched link may bind, before a flow left it or after
// one came, the solver is skipped: the new flows take their caps and no other rate changes (LinkState::demand_units).
// The reference mode recomputes the whole component (below); tests check that both agree.
//
// Links that cannot bind are skipped when forming components: when the bottleneck bandwidths of all flows on a
// link add up to no more than its capacity, the link never limits any of them (each flow is capped by its own
// bottleneck), so it couples nothing. Each flow's bottleneck is applied as a per-flow cap instead. The result is
// the same allocation, found over far smaller components on large fabrics.
//
// Classes of identical flows (NetworkOptions::flow_classes, flow_classes.cpp): flows that start at one instant
// with the same bytes, weight, latency and bottleneck (the transfers of a ring step) are solved as one flow whose
// route is all their routes together (a link crossed by k of them counts k times), with one rate, one drain and
// one arrival event. The allocation is checked to be the max-min one of the individual flows: a class at its cap is
// (every member at its own bottleneck bandwidth, and the fill kept every link within capacity); a class held below
// it is kept only while every member crosses a saturated link on which no flow has a higher share; otherwise it is
// split in two (the members held at its level, and the others), each part a class that carries on from the same
// state, and the rates are recomputed. So classes change the cost, never the answer: the fill gives flows at one
// level one rate to the bit however it reaches them (max_min_fair.cpp), and tests compare both ways to the
// picosecond.
//
// Timing of one flow (assumption, as in SimGrid's and ASTRA-sim's analytical flow models): bytes leave the source
// at the flow's fair rate, which changes as other flows come and go; the flow occupies bandwidth on every link of
// its route until its last byte has left; that byte arrives one route latency later. On an idle path:
// end = start + latency + bytes / bottleneck bandwidth.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "engine/simulator.h"
#include "engine/small_vector.h"
#include "sim/event_kind.h"
#include "sim/network/class_shape.h"
#include "sim/network/flow.h"
#include "sim/network/flow_state.h"
#include "sim/network/link_state.h"
#include "sim/network/link_tap.h"
#include "sim/network/link_utilization.h"
#include "sim/network/timed_flow.h"
#include "topologies/cluster.h"
#include "topologies/router.h"

namespace clustersim::sim {

enum class SharingModel : std::uint8_t {
    max_min,          // contention-aware: max-min fair shares, recomputed when flows start or end
    contention_free,  // each flow gets its route's bottleneck bandwidth, whatever else runs (alpha-beta per flow)
};

struct NetworkOptions {
    SharingModel sharing = SharingModel::max_min;
    bool record_flows = false;            // keep a FlowRecord per flow (tests; grows with every flow of the run)
    bool record_link_utilization = true;  // keep what each link carried, and when (LinkUtilization)
    /// Recompute only the flows whose max-min conditions a change breaks (exact, usually a handful), instead
    /// of the whole component of flows coupled through links that can bind.
    bool incremental = true;
    /// Solve flows that start together with identical parameters as one class (exact; see above).
    bool flow_classes = true;
    /// Two-level routing (topologies/router.h); off: a next-hop table per destination, the same routes (the
    /// reference the scaling benchmark compares with).
    bool two_level_routing = true;
};

class FlowNetwork {
public:
    FlowNetwork(const topo::Cluster& cluster, engine::Simulator& sim, NetworkOptions options = {});

    /// Starts a flow of `bytes` from src to dst now. `flow_key` picks among equal-cost paths (see Router);
    /// `owner` is the caller's tag, returned with the arrival.
    FlowId start_flow(topo::DeviceId src, topo::DeviceId dst, std::uint64_t bytes, std::uint64_t flow_key,
                      std::uint32_t owner);
    using RouteCost = network::RouteCost;
    [[nodiscard]] RouteCost route_cost(std::span<const topo::LinkId> route) const;
    /// Starts a flow on a given route (links from src to dst) standing for `weight` flows that share it: it
    /// gets `weight` shares wherever it competes (NCCL channels that take the same path), and `bytes` is their
    /// total. Alone on its path it moves at the bottleneck bandwidth, like one flow.
    /// `extra_latency` (software or protocol latency) is added to the route's latency. `cost`, when given, is the
    /// route's route_cost (callers that start many flows on one route keep it; checked to be current).
    /// `tap`: the tap (below) recording what this flow does, or no_tap.
    FlowId start_flow_on_route(topo::DeviceId src, topo::DeviceId dst, std::span<const topo::LinkId> route,
                               std::uint64_t bytes, std::uint32_t owner, std::uint32_t weight,
                               engine::Time extra_latency = engine::Time{0}, const RouteCost* cost = nullptr,
                               std::uint32_t tap = no_tap);

    /// What an event did to flows: their last byte left the source (drained) or reached the destination.
    struct FlowEvent {
        std::span<const FlowId> flows;  // empty when the event concerned no flow (a rate update); several: a class
        std::span<const std::uint32_t> owners;  // each flow's owner (owner(flow)), side by side with `flows`
        bool arrived = false;
    };
    /// Handles an event of one of the network's kinds. The flows' ids and owners stay readable until the next
    /// call after their arrival.
    FlowEvent handle(const engine::Event& event);
    [[nodiscard]] static bool owns(std::uint16_t kind) {
        return kind == to_u16(EventKind::flow_drained) || kind == to_u16(EventKind::flow_arrived) ||
               kind == to_u16(EventKind::network_rate_update);
    }

    /// Names of flow owners for errors (a flow left without a route): a plain function and a context pointer.
    struct OwnerNames {
        std::string (*describe)(const void* context, std::uint32_t owner) = nullptr;
        const void* context = nullptr;
    };
    void set_owner_names(OwnerNames names) { owner_names_ = names; }
    /// Sets a link's capacity to `factor` times its bandwidth, or takes it down (factor 0) or back up (factor > 0
    /// after 0). The flows sending on it carry on with the bytes they have left: over the new capacity, or re-routed
    /// over the remaining equal-cost or longer paths (the router without the link, ECMP keyed by the path it was on),
    /// and the rates are re-shared at this instant. Flows whose last byte is already on its way are not touched. Throws
    /// InputError naming `what` (the event), the flow's endpoints and its owner when no path is left.
    void set_link_state(topo::LinkId link, double factor, const std::string& what);
    /// A link's capacity now (its bandwidth, unless degraded; 0 while down).
    [[nodiscard]] double capacity(topo::LinkId link) const { return links_[link.index()].capacity; }

    [[nodiscard]] std::uint32_t owner(FlowId flow) const { return flow_owner_[flow.index()]; }
    /// The flow's rate now (its class's: each member has the same).
    [[nodiscard]] double rate(FlowId flow) const {
        const std::uint32_t group = share_[flow.index()].group;
        return share_[group == no_class ? flow.index() : classes_[group].members.front()].rate;
    }
    /// The flow's duration alone on an empty network: route latency + bytes / bottleneck bandwidth.
    [[nodiscard]] engine::Time ideal_duration(FlowId flow) const { return flow_ideal_[flow.index()]; }
    /// When the flow started.
    [[nodiscard]] engine::Time start_time(FlowId flow) const { return flow_start_[flow.index()]; }
    /// Contention delay attributed to a link, in seconds: for every flow held below its own bottleneck rate by
    /// this link, the time lost, (cap - rate) / cap per second held.
    [[nodiscard]] double contention_delay_s(topo::LinkId link) const {
        return static_cast<double>(link_delay_units_[link.index()]) * 0x1p-64;
    }
    [[nodiscard]] std::size_t active_flows() const { return active_; }
    /// Bytes of all flows that have arrived.
    [[nodiscard]] std::uint64_t delivered_bytes() const { return delivered_bytes_; }
    [[nodiscard]] std::uint64_t started_bytes() const { return started_bytes_; }
    [[nodiscard]] std::uint64_t flows_completed() const { return completed_; }
    [[nodiscard]] std::uint64_t rate_updates() const { return rate_updates_; }
    /// Updates that touched no link able to limit a flow: the new flows took their caps, without the solver.
    [[nodiscard]] std::uint64_t updates_at_caps() const { return updates_at_caps_; }
    /// Flows whose rates were recomputed, summed over all updates (the cost of contention-awareness).
    [[nodiscard]] std::uint64_t flows_reassigned() const { return flows_reassigned_; }
    /// Flows whose rate actually changed, summed over all updates.
    [[nodiscard]] std::uint64_t flows_rerated() const { return flows_rerated_; }
    /// Classes of identical flows formed, the flows they held, and the classes split into their members.
    [[nodiscard]] std::uint64_t classes_formed() const { return classes_formed_; }
    [[nodiscard]] std::uint64_t flows_in_classes() const { return flows_in_classes_; }
    [[nodiscard]] std::uint64_t classes_split() const { return classes_split_; }

    // Transfers timed outside the network (timed_flow.h, timed_flows.cpp).
    /// Thrown by a flow attaching to a held link: the transfers timed there assumed they had it alone.
    struct LinkHeld {
        topo::LinkId link;
    };
    void hold_link(topo::LinkId link) { ++timed_[link.index()].holds; }
    /// (The last of its holds gone: the rate its timed flows left drops to 0 in its utilization.)
    void release_link(topo::LinkId link);
    /// No flow has ever sent on the link (a link that carried flows before will likely carry some again).
    [[nodiscard]] bool link_unused(topo::LinkId link) const { return !timed_[link.index()].attached_once; }
    /// How many links have carried a flow so far: while it stays the same, every link unused before still is.
    [[nodiscard]] std::uint64_t links_attached() const { return links_attached_; }
    using AloneTiming = network::AloneTiming;
    /// Counts a flow timed outside the network (started, delivered, completed) and records what its route's links
    /// carried: `rate` over [start, drained). Its links must be held (no other flow on them meanwhile).
    void add_timed_flow(std::span<const topo::LinkId> route, std::uint64_t bytes, double rate, engine::Time start,
                        engine::Time drained);
    /// add_timed_flow link by link: what flows timed from `origin` left on `link` (its spans, in the order the flows
    /// were timed, each rate as the network carries it: carried_rate); count_timed_flows counts them. Links may be
    /// given in any order when no span ends past `timed_spans_fit`'s bound (no link's utilization bins change width
    /// meanwhile).
    void add_timed_spans(topo::LinkId link, std::span<const network::TimedSpan> spans, engine::Time origin);
    void count_timed_flows(std::uint64_t bytes, std::uint64_t flows);
    /// A rate as links carry it (rounded to the rate units their sums are kept in).
    [[nodiscard]] static double carried_rate(double rate) { return rate_of_units(rate_units(rate)); }
    [[nodiscard]] bool timed_spans_fit(engine::Time end) const {
        return !options_.record_link_utilization || utilization_.fits(end);
    }

    // Taps (link_tap.h, link_taps.cpp): what the flows of one caller do to the links they cross, recorded while no
    // other flow touches those links, and given to the links again without the flows (replay_tap).
    static constexpr std::uint32_t no_tap = network::no_tap;
    using TapStep = network::TapStep;
    using TapRecord = network::TapRecord;
    /// Starts noting which flows start on which links, for taps (idempotent). Taps opened at the instant it first
    /// does are spoiled: a flow started earlier in it on a link the tap then uses would go unseen.
    void enable_taps();
    /// Opens a tap (enabling taps if need be).
    [[nodiscard]] std::uint32_t open_tap();
    /// Closes the tap: its record, times from `origin`; its links no longer tapped.
    void close_tap(std::uint32_t tap, engine::Time origin, TapRecord& out);
    [[nodiscard]] bool tap_valid(std::uint32_t tap) const { return taps_[tap].valid; }
    void spoil_tap(std::uint32_t tap);
    /// Whether no flow sends on the links now or started on them at this instant, none holds them and none is
    /// tapped, and their utilization is back at 0.
    [[nodiscard]] bool links_free(std::span<const topo::LinkId> links) const;
    /// Gives the links what a tap recorded, from `origin` on (their utilization, contention delay), and counts its
    /// flows and bytes as started and delivered. The links must be held meanwhile (hold_link).
    void replay_tap(const TapRecord& record, engine::Time origin);

    /// Recomputes what the network keeps per link as flows come and go (its flows' entries where their places say,
    /// its flows' rate sum, the flows it holds below their caps) from its flows, and fails with an internal error on a
    /// difference (tests).
    void audit() const;

    [[nodiscard]] const std::vector<FlowRecord>& records() const { return records_; }
    /// What each link carried, when NetworkOptions::record_link_utilization is on.
    [[nodiscard]] const LinkUtilization& utilization() const { return utilization_; }
    [[nodiscard]] topo::Router& router() { return router_; }
    [[nodiscard]] const topo::Cluster& cluster() const { return cluster_; }

private:
    // A flow's state, by slot (flow_state.h).
    static constexpr std::uint32_t no_class = network::no_class;
    using FlowShare = network::FlowShare;
    using LinkEntry = network::LinkEntry;
    using FlowClass = network::FlowClass;
    using FlowState = network::FlowState;
    struct Starting;
    /// Writes the state of a flow that started in this instant from its Starting record (a lone flow or a class's
    /// leader, as the update attaches it; every starting flow before a link changes state).
    void materialize(const Starting& s);

    std::uint32_t allocate_slot();
    void attach(std::uint32_t flow);
    void detach(std::uint32_t flow);
    void mark_dirty(std::uint32_t link);
    void on_drained(std::uint32_t flow);
    /// Progressive filling over the component of the dirty links (max_min_fair.cpp).
    void recompute_rates();
    /// The update when no touched link may bind: the new flows at their caps, every other rate kept.
    void rate_flows_at_caps();
    /// The update otherwise: the affected flows' max-min rates (classes split until exact).
    void solve();
    /// Applies the update's rates to its flows (re-arming their drains) and records link utilization.
    void apply_rates();
    /// A new epoch whose component starts as the dirty links (once each), and no flow.
    void select_dirty_links();
    void collect_component();
    void select_affected_flows();
    /// Whether a flow's rate is at `level` per share (within same_level, max_min_fair.cpp).
    [[nodiscard]] static bool at_level(double rate, std::uint32_t weight, double level);
    void fill();
    void record_utilization_of_component();
    void schedule_update();
    // Classes (flow_classes.cpp).
    void form_classes();
    /// Makes a class of flows alike, none of them attached (the first leads); the caller attaches the leader. With
    /// `starts` (the members' Starting records, side by side with `members`), their routes and owners are read there;
    /// the members' own routes are left as they are (a member's route is read again only when its class splits, which
    /// writes it).
    void make_class(std::span<const std::uint32_t> members, const Starting* starts = nullptr);
    [[nodiscard]] bool class_exact(std::uint32_t leader);
    /// Splits a class in two (in_two: the members held at its level by the update in progress, and the others) or
    /// into its members, each going on from the class's state.
    void split_class(std::uint32_t leader, bool in_two);
    /// Frees class `group` (its members already told apart): its slot for reuse, its shape dropped.
    void release_class(std::uint32_t group);
    /// Splits the classes of the component whose computed rates are not the max-min ones; true if any was.
    bool split_inexact_classes();
    /// A flow started in this instant, with what a class is formed by (its bytes, latency, weight and cap), its
    /// owner and a copy of its route (in starting_routes_), side by side: form_classes sorts and groups these and
    /// make_class joins the members' routes without reading the flows' states (written as they started and evicted
    /// since by the starts of a class's hundreds of members).
    struct Starting {
        std::uint64_t bytes = 0;
        engine::Time latency{};
        double cap = 0;
        std::uint32_t weight = 1;
        std::uint32_t flow = 0;
        std::uint32_t owner = 0;
        std::uint32_t route_at = 0;  // its route: [route_at, route_at + hops) of starting_routes_
        std::uint32_t hops = 0;
        [[nodiscard]] auto class_key() const { return std::tie(bytes, latency, weight, cap); }
    };
    /// The flow's Starting record, its route copied to the end of starting_routes_.
    [[nodiscard]] Starting starting(std::uint32_t flow) {
        const FlowState& f = flows_[flow];
        const auto at = static_cast<std::uint32_t>(starting_routes_.size());
        starting_routes_.insert(starting_routes_.end(), f.route.begin(), f.route.end());
        return {f.bytes,
                f.latency,
                share_[flow].cap,
                share_[flow].weight,
                flow,
                flow_owner_[flow],
                at,
                static_cast<std::uint32_t>(f.route.size())};
    }
    /// Whether the link of entry `e` holds its flow below its cap (a class: holds a member that crosses it; a
    /// member's bottleneck is on its route, so a scan of the link's entries finds the class).
    [[nodiscard]] bool held_by(const LinkEntry& e, std::uint32_t link) const {
        const FlowShare& s = share_[e.flow];
        return s.group == no_class ? s.limiting_link == link : classes_[s.group].held[e.place] != 0;
    }
    /// A class's members' routes, one after the other (member k's: [offsets[k], offsets[k + 1])): its shape's, or
    /// its leader's route when it has none.
    [[nodiscard]] std::span<const topo::LinkId> class_route(const FlowClass& c, std::uint32_t leader) const {
        return c.shape ? std::span<const topo::LinkId>(c.shape->route)
                       : std::span<const topo::LinkId>(flows_[leader].route);
    }
    /// Calls fn(link, count) for each link the flow attaches to: a lone flow's hops (count 1), a class's distinct
    /// links with the members crossing each (ClassShape::links).
    template <class Fn>
    void for_each_link(std::uint32_t flow, Fn&& fn) const {
        const std::uint32_t group = share_[flow].group;
        if (group == no_class || !classes_[group].shape) {
            for (const topo::LinkId l : flows_[flow].route) fn(l.value, std::uint32_t{1});
        } else {
            for (const FlowClass::LinkCount& lc : classes_[group].shape->links) fn(lc.link, lc.count);
        }
    }
    /// How many links for_each_link visits.
    [[nodiscard]] std::size_t attached_links(std::uint32_t flow) const {
        const std::uint32_t group = share_[flow].group;
        return group == no_class || !classes_[group].shape ? flows_[flow].route.size()
                                                           : classes_[group].shape->links.size();
    }
    /// Makes the bottlenecks the update found the class's own.
    void adopt_limits(std::uint32_t group);
    void finish_arrival(std::uint32_t flow);
    /// The route from src to dst into route_scratch_; with links down, an unreachable destination names the owner.
    void route_around_failures(topo::DeviceId src, topo::DeviceId dst, std::uint64_t flow_key, std::uint32_t owner);
    /// A new route for `flow` from its source to its destination, avoiding links that are down (link_events.cpp).
    void reroute(std::uint32_t flow, const std::string& what);
    /// The ECMP key of a detour around links that are down, from the path it replaces.
    [[nodiscard]] static std::uint64_t detour_key(std::span<const topo::LinkId> route);
    /// Cap of `flow` (its weight set) from its route's cost; returns the route's bottleneck bandwidth.
    double set_cap(std::uint32_t flow, const RouteCost& cost);
    /// Cap and latency of `flow` (its weight set) from its route's cost; returns the route's bottleneck bandwidth.
    double set_cap_from_route(std::uint32_t flow, engine::Time extra_latency, const RouteCost& cost);
    double set_cap_from_route(std::uint32_t flow, engine::Time extra_latency) {
        return set_cap_from_route(flow, extra_latency, route_cost(flows_[flow].route));
    }
    [[nodiscard]] std::string describe_owner(std::uint32_t owner) const;

    const topo::Cluster& cluster_;
    engine::Simulator& sim_;
    NetworkOptions options_;
    topo::Router router_;
    std::vector<engine::Time> link_latency_;  // by link (flat: read for every hop of every flow started)
    std::uint64_t link_state_version_ = 0;
    // Rates summed in fixed point: units of 2^-32 bytes/s, each rate rounded down once (LinkState::headroom).
    using RateUnits = network::RateUnits;
    [[nodiscard]] static RateUnits rate_units(double rate) {
        rate = std::min(rate, 0x1p63);  // (no link carries 2^63 bytes/s: counted as that)
        const auto whole = static_cast<std::uint64_t>(rate);
        const auto fraction = static_cast<std::uint64_t>((rate - static_cast<double>(whole)) * 0x1p32);
        return (static_cast<RateUnits>(whole) << 32) | fraction;
    }
    [[nodiscard]] static double rate_of_units(RateUnits units) {
        if (units <= 0) return 0;
        return static_cast<double>(static_cast<std::uint64_t>(units >> 32)) +
               static_cast<double>(static_cast<std::uint32_t>(units)) * 0x1p-32;
    }
    using LinkState = network::LinkState;
    std::vector<LinkState> links_;  // by link
    /// A link's capacity in rate units (what its headroom counts from): from its record's capacity, in the line the
    /// headroom is in (an array of them beside cost a cache miss per link the link counters visit).
    [[nodiscard]] RateUnits capacity_units(std::uint32_t link) const { return rate_units(links_[link].capacity); }
    /// After a fill that fixed flows at `link` at `level`: gives the flows at that level the link has selected its
    /// canonical share (tied: their rates in rate units and weights summed); true if one it left out has another.
    bool align_tied_flows(std::uint32_t link, double level, RateUnits tied_units, std::uint32_t tied_weight);
    /// Sets a link's capacity in bytes/s; its headroom moves by the change in rate units (capacity_units).
    void set_capacity(std::uint32_t link, double bytes_per_s) {
        links_[link].headroom += rate_units(bytes_per_s) - capacity_units(link);
        links_[link].capacity = bytes_per_s;
    }
    static constexpr std::uint64_t max_units = std::uint64_t{1} << 40;  // 1.1 TB/s
    /// A draining flow's new rate, in its links' sums too.
    void set_share_rate(std::uint32_t flow, double rate);
    /// A draining flow's new limiting link, in the held counts too (a class's are its members': adopt_limits).
    void set_limiting_link(std::uint32_t flow, std::uint32_t link) {
        FlowShare& s = share_[flow];
        if (s.group == no_class && s.limiting_link != link) {
            if (s.limiting_link != UINT32_MAX) --links_[s.limiting_link].held_count;
            if (link != UINT32_MAX) ++links_[link].held_count;
        }
        s.limiting_link = link;
    }
    /// The links that hold `flow` below its cap (held_by): its limiting link, or its class's members' bottlenecks.
    [[nodiscard]] std::span<const std::uint32_t> held_links(std::uint32_t flow) const {
        const FlowShare& s = share_[flow];
        if (s.group != no_class) return classes_[s.group].limit_links;
        if (s.limiting_link == UINT32_MAX) return {};
        return {&s.limiting_link, 1};
    }
    /// Adds `delta` to the held counts of the links that hold `flow` (a draining flow).
    void count_held(std::uint32_t flow, std::int32_t delta);
    [[nodiscard]] static std::uint64_t demand_units(const FlowShare& s) {
        const double units = std::ceil(s.cap * s.weight);
        return units >= static_cast<double>(max_units) ? max_units : static_cast<std::uint64_t>(units);
    }
    [[nodiscard]] bool may_bind(std::uint32_t link) const {
        // An integer sum exceeds the capacity exactly when it exceeds the capacity rounded down; the capacity is
        // clamped as the flows' parts are (sums of clamped parts may not bind only under a clamped capacity).
        constexpr double clamp = static_cast<double>(max_units);
        return static_cast<double>(links_[link].demand_units) > std::min(links_[link].capacity, clamp) ||
               links_[link].flow_count() >= (std::uint32_t{1} << 24);
    }
    /// A flow was attached to, or detached from, a link that may bind (or a link changed state) since the last
    /// update: rates other than the new flows' may change, and the solver runs.
    bool solve_needed_ = false;
    // By link: the contention delay attributed to it, in units of 2^-64 s, each addition rounded once (integer sums
    // are exact and do not depend on the order of the additions, as the links' rate sums: links alike under a
    // symmetry get the same figure, and a tap's record is one number per link).
    using DelayUnits = network::DelayUnits;
    std::vector<DelayUnits> link_delay_units_;
    [[nodiscard]] static DelayUnits delay_units(double seconds) { return static_cast<DelayUnits>(seconds * 0x1p64); }
    /// What timing transfers outside the network reads of a link, apart from LinkState (a call timed in closed form
    /// checks, holds and releases each of its links: 16 bytes here instead of a cache line each).
    /// What a timed flow leaves on `link`: `rate` (as the network carries it) over [start, drained), with the
    /// link's pending drop `drop` (its TimedLink's, or a caller's copy of it).
    void time_link(std::uint32_t link, engine::Time& drop, double carried, engine::Time start, engine::Time drained);
    struct TimedLink {
        engine::Time drop{-1};       // when its last timed flow left (-1: none pending)
        std::uint16_t holds = 0;     // transfers timed outside the network hold it (hold_link): no flow may attach
        bool attached_once = false;  // a flow has sent on it
    };
    std::vector<TimedLink> timed_;      // by link
    std::uint64_t links_attached_ = 0;  // links with attached_once set
    // Taps (link_taps.cpp): by link, the last flow start on it (when, and its tap) and the open tap that uses it
    // (empty until the first tap opens, at taps_since_); the open taps' records, and their free ids.
    struct LinkTap {
        engine::Time started{-1};
        std::uint32_t started_by = no_tap;
        std::uint32_t tap = no_tap;
    };
    std::vector<LinkTap> link_taps_;
    engine::Time taps_since_{-1};
    std::vector<TapRecord> taps_;
    std::vector<std::uint32_t> free_taps_;
    /// A flow of `tap` (or none) of `bytes` starts on `route` now (see the taps above).
    void note_start(std::span<const topo::LinkId> route, std::uint32_t tap, std::uint64_t bytes);
    /// Charges the contention delay of `flow` up to `now` to the links holding it.
    void account_progress(std::uint32_t flow, engine::Time now);
    void add_link_delay(std::uint32_t link, double seconds) { link_delay_units_[link] += delay_units(seconds); }
    /// Bytes of `flow` not yet sent at `now` (at its rate since rate_since).
    [[nodiscard]] double remaining_at(std::uint32_t flow, engine::Time now) const;
    /// Takes the progress at the old rate up to `now`, before the rate changes.
    void settle(std::uint32_t flow, engine::Time now);
    std::vector<FlowState> flows_;
    // By slot, written as a flow starts, apart from its state (a class's members' states are never written unless
    // the class splits): when it started, its duration alone on an empty network, its owner, its record's index (with
    // NetworkOptions::record_flows).
    std::vector<engine::Time> flow_start_;
    std::vector<engine::Time> flow_ideal_;
    std::vector<std::uint32_t> flow_owner_;
    std::vector<std::uint32_t> flow_record_;
    std::vector<engine::SmallVector<std::uint32_t, 8>>
        link_pos_;                  // by slot: its entry's place on each link it attaches to
    std::vector<FlowShare> share_;  // by flow slot
    std::vector<std::uint32_t> free_slots_;
    std::vector<topo::LinkId> route_scratch_;
    std::vector<std::uint32_t> timer_flow_;  // by timer id: flow slot

    // Dirty links since the last recompute, and scratch space of the solver (kept to avoid reallocation).
    std::vector<std::uint32_t> dirty_links_;
    std::vector<std::uint32_t> attached_;  // flows attached since the last update (incremental mode)
    using LinkFill = network::LinkFill;
    std::vector<LinkFill> link_fill_;  // by link
    /// The link's fill state, its sums those of this epoch (zero if no selected flow crossed it yet).
    LinkFill& sums_of(std::uint32_t link) {
        LinkFill& lf = link_fill_[link];
        if (lf.summed != epoch_) {
            lf.selected = 0;
            lf.demand = 0;
            lf.weight = 0;
            lf.held = 0;
            lf.sole = 0;
            lf.summed = epoch_;
        }
        return lf;
    }
    /// Adds selected flow `f`'s part to the sums of each link it attaches to, and its place (component_flows_) to
    /// their sole flows; calls visit(link fill, link, count) for each, after.
    template <class Visit>
    void select_flow(std::uint32_t f, Visit&& visit) {
        const std::uint32_t place = static_cast<std::uint32_t>(component_flows_.size());
        share_[f].mark = epoch_;
        component_flows_.push_back(f);
        const FlowShare& s = share_[f];
        const RateUnits rate = rate_units(s.rate);
        const double demand = s.cap * s.weight;
        const std::uint32_t weight = s.weight;
        for_each_link(f, [&](std::uint32_t l, std::uint32_t count) {
            LinkFill& lf = sums_of(l);
            lf.weight += weight * count;
            lf.demand += demand * count;
            lf.selected += rate * count;
            lf.sole = lf.sole == 0 || lf.sole == place + 1 ? place + 1 : LinkFill::many;
            visit(lf, l, count);
        });
        for (const std::uint32_t l : held_links(f)) ++sums_of(l).held;
    }
    /// What the consistency check reads of a link, from the selected flows after a fill; valid in the pass whose
    /// stamp it holds (check_stamp_).
    struct LinkCheck {
        double min_level = INFINITY;  // the least level of those the fill fixed here
        std::uint32_t stamp = 0;      // the pass min_level is of
        std::uint32_t listed = 0;     // the pass that listed it in check_links_
    };
    std::vector<LinkCheck> link_check_;  // by link
    LinkCheck& check_of(std::uint32_t link) {
        LinkCheck& c = link_check_[link];
        if (c.stamp != check_stamp_) c = LinkCheck{INFINITY, check_stamp_, c.listed};
        return c;
    }
    /// Lists the link for the check of this pass (once), and returns its state.
    LinkCheck& check_link(std::uint32_t link) {
        LinkCheck& c = check_of(link);
        if (c.listed != check_stamp_) {
            c.listed = check_stamp_;
            check_links_.push_back(link);
        }
        return c;
    }
    std::uint32_t epoch_ = 0;
    bool update_pending_ = false;
    std::vector<std::uint32_t> component_links_;
    std::vector<std::uint32_t> component_flows_;
    std::vector<double> new_rate_;                     // by flow slot
    std::vector<std::uint8_t> fixed_;                  // by flow slot
    std::vector<std::uint32_t> new_limit_;             // by flow slot: link that fixed it, or none (its own cap)
    __extension__ typedef unsigned __int128 ShareKey;  // (fair share bits << 32) | link: fill's heap order
    std::vector<ShareKey> share_heap_;                 // fill's heap of (fair share, link)
    std::vector<ShareKey> sole_least_;                 // fill: by place in component_flows_, its least key alone
    std::vector<std::uint32_t> check_links_;           // links the consistency check visits
    std::uint32_t check_stamp_ = 0;
    std::vector<ShareKey> by_cap_;  // component flows as keys (cap, slot), by cap then slot
    std::vector<std::uint32_t> touched_links_;
    std::vector<std::uint32_t> utilization_mark_;  // epoch stamps, by link

    std::vector<FlowClass> classes_;
    std::vector<std::uint32_t> free_classes_;
    std::array<std::vector<std::uint32_t>, 2> split_parts_;  // a split class's members: held at its level, or not
    std::vector<Starting> starting_;  // flows started this instant, attached (alone or in classes) by the update
    std::vector<topo::LinkId> starting_routes_;  // their routes (Starting::route_at)
    std::vector<topo::LinkId> joined_route_;     // make_class: the members' routes, when not side by side already
    std::vector<std::uint32_t> class_members_;   // form_classes: the slots of the class being made
    std::vector<std::uint32_t> to_split_;
    std::vector<std::uint32_t> round_dirty_;  // the update's dirty links, kept for a second round after a split
    struct LinkLoad {  // what class_exact reads of a link: the highest share on it, and whether it is full
        double max_level = 0;
        std::uint32_t stamp = 0;  // the pass (exact_stamp_) it was summed in
        bool saturated = false;
    };
    std::vector<LinkLoad> link_load_;        // by link
    std::vector<std::uint32_t> limit_mark_;  // by link: the adopt_limits pass (limit_stamp_) that listed it
    network::ClassShapes shapes_;
    std::uint32_t limit_stamp_ = 0;
    std::uint32_t exact_stamp_ = 0;
    std::vector<FlowId> event_flows_;          // the flows of the event handled last
    std::vector<std::uint32_t> event_owners_;  // their owners
    std::vector<std::uint32_t> release_;       // slots of flows reported arrived, freed at the next event

    std::vector<FlowRecord> records_;
    LinkUtilization utilization_;
    OwnerNames owner_names_;
    std::size_t active_ = 0;
    std::uint64_t delivered_bytes_ = 0;
    std::uint64_t started_bytes_ = 0;
    std::uint64_t completed_ = 0;
    std::uint64_t rate_updates_ = 0;
    std::uint64_t updates_at_caps_ = 0;
    std::uint64_t flows_reassigned_ = 0;
    std::uint64_t flows_rerated_ = 0;
    std::uint64_t classes_formed_ = 0;
    std::uint64_t flows_in_classes_ = 0;
    std::uint64_t classes_split_ = 0;
};

}  // namespace clustersim::sim
