// A flow: one transfer of bytes along a route, and the record of what happened to it.
#pragma once

#include <cstdint>

#include "engine/ids.h"
#include "engine/time.h"
#include "topologies/device.h"

namespace clustersim::sim {

struct FlowTag {};
/// Index of a live flow's slot. Slots are reused once a flow has arrived, so an id is valid from start_flow until
/// its arrival is reported.
using FlowId = engine::StrongId<FlowTag>;

/// What happened to one flow, kept when NetworkOptions::record_flows is on.
struct FlowRecord {
    topo::DeviceId src;
    topo::DeviceId dst;
    std::uint64_t bytes = 0;
    std::uint32_t owner = 0;  // the caller's tag (an op, a collective step)
    engine::Time start{};
    engine::Time end{};             // arrival of the last byte
    engine::Time ideal_duration{};  // route latency + bytes / bottleneck bandwidth, on an empty network
    /// Actual duration minus the duration on an empty network (never negative).
    [[nodiscard]] engine::Time contention_delay() const {
        const engine::Time extra = (end - start) - ideal_duration;
        return extra > engine::zero_time ? extra : engine::zero_time;
    }
    bool operator==(const FlowRecord&) const = default;
};

}  // namespace clustersim::sim
