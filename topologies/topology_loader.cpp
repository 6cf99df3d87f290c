// Dispatch between presets and explicit topologies; preset names and files given on the command line.
#include "topologies/topology_loader.h"

#include <filesystem>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/params.h"
#include "engine/yaml_reader.h"
#include "topologies/connectivity.h"
#include "topologies/presets/preset_registry.h"

namespace clustersim::topo {

Cluster load_topology(const engine::YamlValue& map) {
    if (!map.is_map()) map.fail("expected a topology: a map with 'preset' or with 'devices' and 'links'");
    if (auto preset = map.find("preset")) {
        const PresetEntry& entry = find_topology_preset(preset->as_string(), preset->location());
        const engine::Params params = engine::Params::from_yaml(map, entry.params);
        Cluster cluster = [&] {
            try {
                return entry.build(params);
            } catch (const engine::InputError& e) {
                if (!e.where().file.empty()) throw;
                throw engine::InputError(map.location(), e.message());  // a preset's own check: locate it here
            }
        }();
        check_link_ranges(cluster, map.location());
        check_gpus_connected(cluster, map.location());
        return cluster;
    }
    if (map.find("devices") || map.find("links")) {
        Cluster cluster = load_explicit_topology(map);
        check_link_ranges(cluster, map.location());
        check_gpus_connected(cluster, map.location());
        return cluster;
    }
    map.fail("expected 'preset: NAME' or 'devices' and 'links'");
}

Cluster load_topology(const std::string& spec, const std::vector<std::string>& overrides) {
    // A path that names no file is a missing file, not an unknown preset.
    const std::filesystem::path as_path(spec);
    const bool looks_like_file =
        spec.find('/') != std::string::npos || as_path.extension() == ".yaml" || as_path.extension() == ".yml";
    if (looks_like_file && !std::filesystem::is_regular_file(as_path))
        throw engine::InputError(engine::SourceLocation{spec},
                                 std::filesystem::exists(as_path)
                                     ? "not a regular file: expected a topology YAML file or a preset name"
                                     : "no such topology file (or give a preset name: clustersim topo list)");
    engine::YamlValue doc =
        std::filesystem::is_regular_file(spec)
            ? engine::YamlValue::load_file(spec)
            : engine::YamlValue::load_string(fmt::format("preset: \"{}\"\n", spec), "(command line)");
    for (const auto& o : overrides) doc.apply_override(o);
    // A scenario file holds the topology under 'topology'; a topology file is the map itself.
    if (doc.is_map()) {
        if (auto inner = doc.find("topology")) return load_topology(*inner);
    }
    return load_topology(doc);
}

}  // namespace clustersim::topo
