// What a network tap records (FlowNetwork::open_tap, link_taps.cpp): the effects of one caller's flows on the links
// they crossed while no other flow touched those links (the replay's repeated calls, sim/replay/replay_repeats.cpp).
// A tap is spoiled, and its record of no use, when another flow started or sent on one of its links while it was
// open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/time.h"
#include "sim/network/link_state.h"
#include "topologies/cluster.h"

namespace clustersim::sim::network {

inline constexpr std::uint32_t no_tap = UINT32_MAX;

struct TapStep {
    engine::Time at;  // from the tap's origin
    std::uint32_t link = 0;
    double rate = 0;  // the link's rate from then on (LinkUtilization::set_rate)
};

struct TapRecord {
    std::vector<topo::LinkId> links;  // every link its flows crossed, in the order they first did
    std::vector<DelayUnits> delays;   // by entry of `links`: the contention delay it added
    std::vector<TapStep> steps;       // the links' rate changes, in time order (record_link_utilization)
    std::uint64_t flows = 0, bytes = 0;
    bool valid = true;
};

/// Steps a tap keeps at most (24 bytes each); past them it is spoiled (its caller runs as flows next time).
inline constexpr std::size_t max_tap_steps = std::size_t{1} << 20;

}  // namespace clustersim::sim::network
