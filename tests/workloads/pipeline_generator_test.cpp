// The pipeline generator's schedules against their closed forms, with free communication: GPipe and 1F1B take
// (m + p - 1)(F + B); Megatron's interleaving over v model chunks per stage m(F + B) + (p - 1)(F + B)/v.
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "sim/scenario/scenario.h"
#include "workloads/workload_registry.h"

using namespace clustersim;

namespace {
engine::Time iteration(const std::string& schedule, std::uint32_t chunks) {
    // Example 01 reshaped: 4 stages, 1 replica, 4 micro-batches, F = 8 us and B = 16 us per stage, a 4-GPU ring
    // of 1 PB/s links without latency (a 2-byte activation costs 1 ps), no slowdown, no optimizer.
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";
    const auto scenario = sim::load_scenario(
        path, {"topology={preset: ring, gpus: 4, bandwidth: 1 PB/s, latency: 0 ns}", "workload.dp=1",
               "workload.microbatches=4", "workload.forward_time=8 us", "workload.backward_time=16 us",
               "workload.hidden=1", "workload.seq_len=1", "workload.optimizer=false", "workload.schedule=" + schedule,
               "workload.virtual_stages=" + std::to_string(chunks), "system.compute_slowdown_during_comm=0"});
    return sim::run_scenario(scenario).replay.timeline.makespan;
}
bool near(engine::Time a, engine::Time b) { return std::abs((a - b).count()) <= 100; }  // 1 ps per transfer
}  // namespace

TEST_CASE("pipeline generator schedules meet their closed forms", "[workloads][pipeline]") {
    using engine::Time;
    REQUIRE(near(iteration("gpipe", 1), Time{168'000'000}));  // 7 x 24 us
    REQUIRE(near(iteration("1f1b", 1), Time{168'000'000}));
    REQUIRE(near(iteration("1f1b", 2), Time{132'000'000}));  // 4 x 24 + 3 x 24 / 2 us
    REQUIRE(near(iteration("1f1b", 4), Time{114'000'000}));  // 4 x 24 + 3 x 24 / 4 us
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"workload.virtual_stages=3"}),
                        Catch::Matchers::Contains("4 layers per stage do not split into 3 model chunks"));
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"workload.virtual_stages=2", "workload.microbatches=6"}),
                        Catch::Matchers::Contains("interleaving needs the micro-batches (6) in groups of pp (4)"));
}

TEST_CASE("docs/formats.md documents every generator parameter", "[workloads][docs]") {
    std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/formats.md");
    std::stringstream text;
    text << in.rdbuf();
    for (const auto& generator : workloads::workload_generators()) {
        INFO(generator.name);
        REQUIRE(text.str().find("| `" + generator.name + "` |") != std::string::npos);
        for (const auto& param : generator.params) {
            INFO(param.name);
            if (param.name != "generator") REQUIRE(text.str().find("`" + param.name + "`") != std::string::npos);
        }
    }
}
