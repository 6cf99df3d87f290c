// The table of topology presets: name, summary, parameters and builder. It drives lookup, `topo --list`,
// rejection of unknown parameters and docs/topologies.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/error.h"
#include "engine/params.h"
#include "topologies/cluster.h"

namespace clustersim::topo {

struct PresetEntry {
    std::string name;
    std::string summary;
    std::vector<engine::ParamSpec> params;
    Cluster (*build)(const engine::Params& params);
};

/// All presets, in alphabetical order.
const std::vector<PresetEntry>& topology_presets();
/// The preset named `name`; a located InputError listing the known ones otherwise.
const PresetEntry& find_topology_preset(std::string_view name, const engine::SourceLocation& where);

// Builders, one per file under topologies/presets/.
Cluster build_server_cluster(const engine::Params& params);  // dgx-a100, dgx-h100, dgx-h200, dgx1-v100, pcie-box
Cluster build_heterogeneous(const engine::Params& params);
Cluster build_multi_dc(const engine::Params& params);
Cluster build_edge(const engine::Params& params);
Cluster build_ring(const engine::Params& params);
Cluster build_torus(const engine::Params& params);

}  // namespace clustersim::topo
