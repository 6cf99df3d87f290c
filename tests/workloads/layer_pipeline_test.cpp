// Pipeline parallelism and micro-batches in the layers generator against closed forms: with free communication a
// pipeline of p identical stages over m micro-batches takes (m + p - 1)(F + B) plus the optimizer, F + B and the
// optimizer measured on one stage alone; the balanced split is the best contiguous one (brute force); messages
// between stages carry the stage's last activations; each stage's gradients are reduced over its own
// data-parallel group; and located errors.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "sim/scenario/scenario.h"
#include "tests/workloads/generate.h"

using namespace clustersim;
using traces::OpKind;

namespace {

const std::string data = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/data/layers/";

traces::OpGraph generate(const std::string& yaml) { return testing::generate("layers", yaml); }

// A layers run on a ring of 4 GPUs with 1 PB/s links and no latency (a 32 KiB message costs 33 ps), no slowdown.
engine::Time run(const std::string& model, std::uint32_t pp, std::uint32_t microbatches, std::uint32_t batch,
                 const std::string& schedule = "1f1b") {
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/10-vgg16-gradient-compression/scenario.yaml";
    const auto scenario = sim::load_scenario(
        path, {"topology={preset: ring, gpus: 4, bandwidth: 1 PB/s, latency: 0 ns}", "workload.model=" + data + model,
               "workload.dp=1", fmt::format("workload.pp={}", pp),
               fmt::format("workload.microbatches={}", microbatches), fmt::format("workload.batch_per_gpu={}", batch),
               "workload.schedule=" + schedule, "system.compute_slowdown_during_comm=0"});
    return sim::run_scenario(scenario).replay.timeline.makespan;
}

}  // namespace

TEST_CASE("a pipeline of identical stages takes (m + p - 1)(F + B) plus the optimizer",
          "[workloads][layers][pipeline]") {
    // One stage alone: one micro-batch of 4 samples is F + B + optimizer; two are 2 (F + B) + optimizer.
    const engine::Time one = run("uniform2.yaml", 1, 1, 4), two = run("uniform2.yaml", 1, 2, 8);
    const engine::Time f_plus_b = two - one, optimizer = one - f_plus_b;
    REQUIRE(f_plus_b.count() > 0);
    REQUIRE(optimizer.count() > 0);
    for (const char* schedule : {"1f1b", "gpipe"}) {
        INFO(schedule);
        // 4 stages of 2 layers, 8 micro-batches of 4: 11 (F + B) + the optimizer, to a picosecond per message
        // (2 x 3 boundaries x 8 micro-batches of 32 KiB).
        const engine::Time pipeline = run("uniform8.yaml", 4, 8, 32, schedule);
        const engine::Time expected = engine::Time{11 * f_plus_b.count()} + optimizer;
        REQUIRE(std::abs((pipeline - expected).count()) <= 48 * 40);
    }
}

TEST_CASE("the balanced split is the best contiguous split of the forward FLOPs", "[workloads][layers][pipeline]") {
    const double flops[] = {5, 1, 7, 2, 2, 6, 1, 3};  // x 1e9, uneven.yaml
    for (std::uint32_t pp = 2; pp <= 5; ++pp) {
        INFO("pp " << pp);
        const auto g = generate(fmt::format("{{generator: layers, model: {}uneven.yaml, dp: 1, pp: {}}}", data, pp));
        REQUIRE(g.rank_count == pp);
        // Each rank's forward FLOPs per sample (batch 32).
        std::map<std::uint32_t, double> load;
        for (const auto& op : g.ops)
            if (g.names[op.name].find(" forward ") != std::string::npos)
                load[g.rank_of(op).value] += op.flops() / 32 / 1e9;
        REQUIRE(load.size() == pp);
        double worst = 0;
        for (const auto& [rank, l] : load) worst = std::max(worst, l);
        // Brute force: the least maximum over every way to cut 8 layers into pp contiguous stages.
        double best = 1e30;
        for (std::uint32_t mask = 0; mask < (1U << 7); ++mask) {
            if (static_cast<std::uint32_t>(__builtin_popcount(mask)) != pp - 1) continue;
            double stage = 0, most = 0;
            for (std::uint32_t l = 0; l < 8; ++l) {
                stage += flops[l];
                if (l == 7 || (mask >> l & 1)) {
                    most = std::max(most, stage);
                    stage = 0;
                }
            }
            best = std::min(best, most);
        }
        REQUIRE(worst == Approx(best));
    }
}

TEST_CASE("pipeline messages and each stage's gradient reduction meet their closed forms",
          "[workloads][layers][pipeline]") {
    // uneven.yaml split "3,3,2" over 3 stages, 2 replicas, 4 micro-batches of 8 samples, fp16 activations.
    const auto g = generate(
        fmt::format("{{generator: layers, model: {}uneven.yaml, dp: 2, pp: 3, microbatches: 4, batch_per_gpu: 32, "
                    "stage_layers: \"3,3,2\"}}",
                    data));
    REQUIRE(g.rank_count == 6);
    REQUIRE(g.rank_stage == std::vector<std::uint32_t>{0, 1, 2, 0, 1, 2});
    std::map<std::uint32_t, std::uint64_t> reduced;  // by rank: gradient bytes all-reduced
    std::map<std::string, std::size_t> sends;
    for (const auto& op : g.ops) {
        const std::string& name = g.names[op.name];
        if (op.kind == OpKind::collective) {
            reduced[g.rank_of(op).value] += op.bytes();
            // Over the stage's two replicas: ranks s and 3 + s.
            const auto& members = g.comms[op.comm().index()].ranks;
            REQUIRE(members.size() == 2);
            REQUIRE(members[1].value == members[0].value + 3);
            REQUIRE(members[0].value == g.rank_of(op).value % 3);
        }
        if (op.kind == OpKind::send) {
            ++sends[name.find("send act") != std::string::npos ? "act" : "grad"];
            // Stage 0 sends layer c's output forward, 8 samples x 64 values x 2 bytes; stage 2 sends back the
            // gradient of its input (layer f's output).
            if (g.rank_of(op).value == 0) REQUIRE(op.bytes() == 8 * 64 * 2);
            if (g.rank_of(op).value == 2) REQUIRE(op.bytes() == 8 * 64 * 2);
        }
    }
    // fp32 gradients of each stage's layers: 1,000 + 2,000 + 3,000, 4,000 + 5,000 + 6,000, 7,000 + 8,000.
    REQUIRE(reduced[0] == 4 * 6000);
    REQUIRE(reduced[1] == 4 * 15000);
    REQUIRE(reduced[2] == 4 * 15000);
    REQUIRE(reduced[3] == reduced[0]);
    REQUIRE(sends["act"] == 2 * 2 * 4);  // 2 replicas x 2 boundaries x 4 micro-batches
    REQUIRE(sends["grad"] == 2 * 2 * 4);
}

TEST_CASE("pipelines of layers reject impossible plans at the key", "[workloads][layers][pipeline]") {
    const std::string model = "{generator: layers, model: " + data + "uneven.yaml, dp: 1";
    REQUIRE_THROWS_WITH(generate(model + ", pp: 9}"), Catch::Matchers::Contains("9 pipeline stages for 8 layers"));
    REQUIRE_THROWS_WITH(generate(model + ", microbatches: 5}"),
                        Catch::Matchers::Contains("5 micro-batches do not split the batch of 32"));
    REQUIRE_THROWS_WITH(generate(model + ", pp: 2, averaging: gossip}"),
                        Catch::Matchers::Contains("pp") && Catch::Matchers::Contains("averaging: allreduce"));
    REQUIRE_THROWS_WITH(generate(model + ", pp: 2, stage_layers: \"3,4\"}"),
                        Catch::Matchers::Contains("gives 2 stages of 7 layers; the plan has pp = 2 and 8 layers"));
    REQUIRE_THROWS_WITH(generate(model + ", pp: 2, schedule: zigzag}"),
                        Catch::Matchers::Contains("unknown schedule 'zigzag'"));
}
