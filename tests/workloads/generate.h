// Builds a generator's graph from a YAML map of its parameters, as a scenario's workload section would.
#pragma once

#include <string>

#include "engine/yaml_reader.h"
#include "workloads/workload_registry.h"

namespace clustersim::testing {

inline traces::OpGraph generate(const std::string& generator, const std::string& yaml) {
    const auto doc = engine::YamlValue::load_string(yaml, "test.yaml");
    const auto& entry = workloads::find_workload_generator(generator, {});
    return entry.build(engine::Params::from_yaml(doc, entry.params));
}

}  // namespace clustersim::testing
