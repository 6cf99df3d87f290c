// Flows timed outside the network (the replay's collective calls in closed form, sim/replay/replay_closed_form.cpp):
// a flow alone on its links is timed by formulas (alone_timing), so a caller that knows no other flow will share
// them times it without the network, holds the links meanwhile, and reports what it sent (FlowNetwork::
// add_timed_flow, or add_timed_spans link by link; timed_flows.cpp).
#pragma once

#include <cstdint>

#include "engine/time.h"

namespace clustersim::sim::network {

/// What a flow's timing reads of its route: the sum of its links' latencies and its bottleneck capacity, as of
/// `version` of the link states (FlowNetwork::set_link_state counts its changes; a cost of another version is stale).
struct RouteCost {
    engine::Time latency{0};
    double bottleneck = 0;
    std::uint64_t version = 0;
};

/// How a flow started on a route of cost `cost` is timed while alone on every link of it.
struct AloneTiming {
    double rate = 0;         // bytes/s while it sends
    engine::Time sending{};  // start to last byte sent (drained)
    engine::Time latency{};  // drained to arrived
    engine::Time ideal{};    // ideal_duration
};

/// The arithmetic of FlowNetwork::start_flow_on_route and of an update that gives the flow its cap, for `bytes`
/// standing for `weight` flows on a route of cost `cost` (`empty_route`: from a device to itself).
[[nodiscard]] inline AloneTiming alone_timing(std::uint64_t bytes, std::uint32_t weight, const RouteCost& cost,
                                              engine::Time extra_latency, bool empty_route) {
    AloneTiming t;
    t.latency = extra_latency + cost.latency;
    const bool moves = bytes > 0 && !empty_route;
    t.rate = moves ? cost.bottleneck / weight * weight : 0;  // (its cap times its weight, as the update sets)
    t.sending = moves ? engine::transfer_time(static_cast<double>(bytes), t.rate) : engine::Time{0};
    t.ideal =
        t.latency + (moves ? engine::transfer_time(static_cast<double>(bytes), cost.bottleneck) : engine::Time{0});
    return t;
}

/// One timed flow as one of its links saw it: `rate` (as carried: FlowNetwork::carried_rate) over [start, drained),
/// from an origin the caller gives.
struct TimedSpan {
    engine::Time start{}, drained{};
    double rate = 0;
};

}  // namespace clustersim::sim::network
