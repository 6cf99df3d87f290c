// Timed changes to the cluster during a run (`system.events`): links degraded to a fraction of their bandwidth,
// links and devices (NICs, switches) failing and coming back, GPUs failing. The replay applies them at their time:
// flows on a changed link are re-capped or re-routed (FlowNetwork::set_link_state); a failed GPU that still has
// work ends the run with a located error (synchronous training cannot go on without it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/time.h"
#include "topologies/cluster.h"

namespace clustersim::engine {
class YamlValue;
}

namespace clustersim::sim {

struct ClusterEvent {
    enum class Kind : std::uint8_t { links, gpu_down };
    engine::Time at{};
    Kind kind = Kind::links;
    std::vector<topo::LinkId> links;  // links: the links it changes
    double factor = 1;                // links: capacity as a fraction of the bandwidth (0: down, 1: restored)
    std::uint32_t gpu = 0;            // gpu_down: index into Cluster::gpus()
    std::string label;                // "leaf0 -> spine1 down", for the timeline, the summary and errors
    engine::SourceLocation where;
};

/// Decodes `system.events`, naming links "A -> B" (one direction) or "A <-> B" (both; parallel links all), devices
/// by name (every link in and out of them) and GPUs by index. An entry with `until` gives two events: the change
/// at `at`, and the link or device restored at `until`. Sorted by time (stable: the file's order within an instant).
std::vector<ClusterEvent> read_cluster_events(const engine::YamlValue& events, const topo::Cluster& cluster);

}  // namespace clustersim::sim
