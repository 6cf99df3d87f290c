// A scenario's `workload:` block: trace files in any format the importers read, or a generator with its checked
// parameters; the graph it gives, checked against what a run can hold.
#pragma once

#include <string>
#include <vector>

#include "engine/yaml_reader.h"
#include "topologies/cluster.h"
#include "traces/op_graph.h"

namespace clustersim::sim {

/// Builds the workload's graph. Generators sized by the job get `gpus` as their world size unless the block gives
/// one; `description` receives a one-line summary and `defaults` the "workload.key=value" defaults in effect (for
/// resolved.yaml). Trace paths are relative to `scenario_path`.
traces::OpGraph read_workload(const engine::YamlValue& workload, const std::string& scenario_path,
                              const topo::Cluster& cluster, std::size_t gpus, std::string& description,
                              std::vector<std::string>& defaults);

}  // namespace clustersim::sim
