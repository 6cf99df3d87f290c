// The table of workload generators: name, summary, parameters and builder. It drives lookup, `--list`,
// rejection of unknown parameters and docs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/error.h"
#include "engine/params.h"
#include "traces/op_graph.h"

namespace clustersim::workloads {

struct GeneratorEntry {
    std::string name;
    std::string summary;
    std::vector<engine::ParamSpec> params;
    traces::OpGraph (*build)(const engine::Params& params);
    /// The ranks the plan needs, from its parameters alone (checked against the topology before building), or
    /// null when the generator sizes itself by the topology (world_size).
    std::uint64_t (*ranks)(const engine::Params& params) = nullptr;
};

/// All generators, in alphabetical order.
const std::vector<GeneratorEntry>& workload_generators();
const GeneratorEntry& find_workload_generator(std::string_view name, const engine::SourceLocation& where);

// Builders, one per file under workloads/generators/.
traces::OpGraph build_dlrm(const engine::Params& params);
std::uint64_t dlrm_ranks(const engine::Params& params);
std::string dlrm_default_table_rows();  // facebookresearch/dlrm's Criteo Kaggle tables
traces::OpGraph build_inference(const engine::Params& params);
std::uint64_t inference_ranks(const engine::Params& params);
std::vector<engine::ParamSpec> inference_params();
traces::OpGraph build_graph_embedding(const engine::Params& params);
std::uint64_t graph_embedding_ranks(const engine::Params& params);
std::vector<engine::ParamSpec> graph_embedding_params();
traces::OpGraph build_layer_data_parallel(const engine::Params& params);
std::uint64_t layer_data_parallel_ranks(const engine::Params& params);
traces::OpGraph build_pipeline_data_parallel(const engine::Params& params);
std::uint64_t pipeline_data_parallel_ranks(const engine::Params& params);
traces::OpGraph build_transformer(const engine::Params& params);

}  // namespace clustersim::workloads
