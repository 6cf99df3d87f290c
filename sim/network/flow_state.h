// What the flow network keeps of a flow (flow_network.h), by slot: what the solver reads (FlowShare, one flat array),
// what its events read (FlowState, two cache lines), and a class of identical flows solved as one (FlowClass).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/simulator.h"
#include "engine/small_vector.h"
#include "engine/time.h"
#include "sim/network/class_shape.h"
#include "topologies/cluster.h"

namespace clustersim::sim::network {

inline constexpr std::uint32_t no_class = UINT32_MAX;  // a flow in no class

/// What the solver reads of a flow, by slot in one flat array (FlowNetwork::share_): the loops over a link's flows
/// touch these and nothing else of the flow.
struct FlowShare {
    double rate = 0;
    double cap = 0;            // bottleneck bandwidth of the route over the weight: the most one share can get
    std::uint32_t weight = 1;  // shares it stands for (channels on one path)
    std::uint32_t limiting_link = UINT32_MAX;  // the link that holds it below cap, if any
    std::uint32_t mark = 0;                    // epoch stamp: selected by the update in progress
    std::uint32_t group = no_class;            // its class, if any (FlowClass index); read in link scans
};
/// Flows solved as one (flow_network.h, flow_classes.cpp): the class's solver state is its leader's slot. Its
/// members' routes in turn are its shape's route, or, without a shape, the leader's route (class_route).
struct FlowClass {
    std::vector<std::uint32_t> members;  // slots, the leader first
    std::vector<std::uint32_t> offsets;  // member k's hops: [offsets[k], offsets[k + 1]) of class_route
    /// When members share links: the members' routes as distinct links, each with the number of members
    /// crossing it, in the order they are first crossed (ClassShape::links). That is what the class attaches and
    /// what the solver walks and sums, so a link k members cross costs one visit, not k (the sums are the same
    /// integers; the members of a tree step across the spines cross a link 6-8 times on average). None when no
    /// two members share a link (a ring step): the route is walked as a lone flow's.
    using LinkCount = ClassShape::LinkCount;
    std::shared_ptr<const ClassShape> shape;
    std::vector<std::uint8_t> held;  // by attached link (for_each_link's order): a member's bottleneck (held_by)
    std::vector<std::uint32_t> member_limit;  // each member's bottleneck link while the class is held below cap
    std::vector<std::uint32_t> next_limit;    // the same, found by the update in progress
    std::vector<std::uint32_t> limit_links;   // member_limit's links, once each (in the members' order)
    /// Each member's owner, in the members' order: read when the class's events are handed on, without the
    /// members' states (written when they started and evicted since).
    std::vector<std::uint32_t> owners;
};
/// What a flow's events read. Two aligned lines (what a flow's start writes, and a class's members only start: their
/// places on links are kept apart, in FlowNetwork::link_pos_, for the flows that attach).
struct alignas(64) FlowState {
    // Held in place up to 8 hops (a route across a rail-optimized fabric): read on every event of the flow.
    // Reused when the slot is. A class's leader without a shape: every member's, one after the other.
    engine::SmallVector<topo::LinkId, 8> route;
    // Bytes not yet sent as of rate_since, when its rate last changed: progress is taken once per rate, so a
    // flow's drain does not depend on how often it was looked at (a class's member and the same flow alone
    // round alike).
    double remaining = 0;
    engine::Time rate_since{};
    engine::Time last_update{};  // contention delay charged up to here
    engine::Time latency{};
    engine::TimerId timer = 0;
    std::uint64_t bytes = 0;
    bool draining = false;  // on its links, sending
};
static_assert(sizeof(FlowState) == 128);

}  // namespace clustersim::sim::network
