// Uneven pipeline stages: the layers dealt to keep the slowest stage least, explicit splits checked, and a
// balanced plan on a mixed cluster faster than the even one.
#include <catch2/catch.hpp>

#include "sim/scenario/balanced_stages.h"
#include "sim/scenario/scenario.h"
#include "tests/test_support.h"

using namespace clustersim;
using Catch::Matchers::Contains;

TEST_CASE("layers are dealt to the stage that would finish soonest", "[sim][stages]") {
    // One layer takes 2 s on stage 0 and 1 s on stage 1; stage 1 also has 3 s of other work. 9 layers: 4 and 5
    // give max(8, 8) = 8 s, the least.
    REQUIRE(sim::balance_layers(9, {2.0, 1.0}, {0.0, 3.0}) == std::vector<std::uint32_t>{4, 5});
    // Equal stages split evenly, the earlier ones taking the remainder.
    REQUIRE(sim::balance_layers(10, {1.0, 1.0, 1.0, 1.0}, {0, 0, 0, 0}) == std::vector<std::uint32_t>{3, 3, 2, 2});
    // Every stage keeps at least one layer, however slow.
    REQUIRE(sim::balance_layers(4, {100.0, 1.0, 1.0}, {0, 0, 0}) == std::vector<std::uint32_t>{1, 2, 1});
}

TEST_CASE("a balanced pipeline on A100 and H100 nodes beats the even split; bad splits are located", "[sim][stages]") {
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/20-heterogeneous-pipeline/scenario.yaml";
    const auto balanced = sim::run_scenario(sim::load_scenario(path, {}));
    const auto even = sim::run_scenario(sim::load_scenario(path, {"workload.placement=even"}));
    REQUIRE(balanced.summary.makespan < even.summary.makespan);
    REQUIRE(balanced.summary.stages.size() == 4);
    REQUIRE(balanced.summary.stages[0].gpus == "A100-80GB");
    REQUIRE(balanced.summary.stages[3].gpus == "H100");
    // The even split leaves the A100 stages the slow ones.
    REQUIRE(even.summary.stages[0].compute > 2 * even.summary.stages[2].compute);
    // Stages that do not divide the layers (40 over 3): the even probe splits 14, 13, 13, and the result adds up.
    const auto three = sim::load_scenario(path, {"workload.pp=3", "topology.mix=dgx-a100:1,dgx-h100:2"});
    REQUIRE(three.resolved_yaml.find("placement: balanced, by the stages' times in the even split: stage 0") !=
            std::string::npos);
    REQUIRE(three.graph.rank_stage.size() == 24);
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"workload.stage_layers=6,6,14,14"}),
                        Contains("or placement: balanced, not both"));
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"workload.placement=fast"}), Contains("expected even or balanced"));
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"workload.placement=even", "workload.stage_layers=10,10,10"}),
                        Contains("stage_layers") && Contains("expected 4 layer counts"));
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"workload.placement=even", "workload.stage_layers=10,10,10,11"}),
                        Contains("add up to 41, not the model's 40"));
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"workload.placement=even", "workload.stage_layers=10,x,10,10"}),
                        Contains("expected layer counts"));
}
