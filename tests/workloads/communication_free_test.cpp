// With nothing to communicate (one rank), each generator's step is its kernels back to back: the run's makespan is
// the sum of its compute kernels' times (the compute model's) and its host delays, to the picosecond, so the
// generators chain their kernels without gaps or overlaps.
#include <catch2/catch.hpp>

#include "sim/compute_model.h"
#include "sim/scenario/scenario.h"

using namespace clustersim;

namespace {
void require_back_to_back(const std::string& example, const std::vector<std::string>& overrides) {
    const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/" + example + "/scenario.yaml";
    const auto scenario = sim::load_scenario(path, overrides);
    const auto result = sim::run_scenario(scenario);
    const auto& g = scenario.graph;
    const topo::GpuSpec& gpu = scenario.cluster.gpu_spec(scenario.cluster.gpus().front());
    engine::Time sum{0};
    std::size_t kernels = 0;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const auto& op = g.ops[i];
        REQUIRE(g.rank_of(op).value == 0);
        if (op.kind == traces::OpKind::compute) {
            sum += sim::compute_time(g, traces::OpId::from_index(i), gpu, scenario.options.compute);
            ++kernels;
        } else if (op.kind == traces::OpKind::delay) {
            sum += g.duration(traces::OpId::from_index(i));
        }
    }
    INFO(example << ": " << kernels << " kernels");
    REQUIRE(kernels > 5);
    REQUIRE(result.summary.makespan == sum);
}
}  // namespace

TEST_CASE("with one rank, every generator's run is its kernels back to back", "[workloads][timing]") {
    require_back_to_back("10-vgg16-gradient-compression", {"workload.dp=1", "topology.nodes=1"});
    require_back_to_back("12-resnet50-local-sgd", {"workload.dp=1", "topology.nodes=1", "workload.steps=3"});
    require_back_to_back("11-dlrm-embedding-sharding", {"workload.ranks=1", "topology.nodes=1"});
    require_back_to_back("16-llama3-70b-inference",
                         {"workload.tp=1", "workload.model=llama3-8b", "workload.output_len=4"});
}
