// Building a Cluster from user input: a preset with parameters, or an explicit list of devices and links.
#pragma once

#include <string>
#include <vector>

#include "topologies/cluster.h"

namespace clustersim::engine {
class YamlValue;
}

namespace clustersim::topo {

/// From a topology map: {preset: NAME, param: value, ...} or {devices: [...], links: [...]}.
Cluster load_topology(const engine::YamlValue& map);

/// From the command line: `spec` is a preset name or a YAML file; `overrides` are "key=value" edits (--set).
Cluster load_topology(const std::string& spec, const std::vector<std::string>& overrides);

/// An explicit topology (devices and links); see docs/topologies.md for the format.
Cluster load_explicit_topology(const engine::YamlValue& map);

}  // namespace clustersim::topo
