// Model-parallel last layers in the layers generator ("one weird trick") against closed forms: the activations
// gathered into and between the model-parallel layers, the input gradients all-reduced and reduce-scattered back,
// each layer's gradients reduced over its own group, the parameters each rank holds, and located errors.
#include <map>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "tests/workloads/generate.h"

using namespace clustersim;
using traces::CollectiveKind;
using traces::OpKind;

namespace {

const std::string model = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/data/layers/uneven.yaml";

traces::OpGraph generate(const std::string& more) {
    return testing::generate("layers",
                             "{generator: layers, model: " + model + ", dp: 8, batch_per_gpu: 16" + more + "}");
}

}  // namespace

TEST_CASE("model-parallel layers gather activations and reduce gradients over their groups",
          "[workloads][layers][model_parallel]") {
    // uneven.yaml: layers a..h, f to h model parallel over groups of 4 of the 8 ranks; fp16 activations, fp32
    // gradients. Outputs per sample: 64 values (h: 32); parameters 1,000 x position.
    const auto g = generate(", mp: 4, mp_from: f");
    std::map<std::string, std::uint64_t> bytes;      // rank 0's exchanges by name, step 0
    std::map<std::string, std::size_t> group_sizes;  // and the size of their communicator
    std::uint64_t reduced_world = 0, reduced_shard = 0, params = 0;
    for (const auto& op : g.ops) {
        if (g.rank_of(op).value != 0) continue;
        const std::string& name = g.names[op.name];
        if (op.kind == OpKind::alloc && name == "alloc parameters") params = op.bytes();
        if (op.kind != OpKind::collective) continue;
        const std::size_t members = g.comms[op.comm().index()].ranks.size();
        if (name.find("bucket") != std::string::npos) {
            (members == 8 ? reduced_world : reduced_shard) += op.bytes();
            if (members != 8) REQUIRE(members == 2);  // the ranks holding the same share: one per group
            continue;
        }
        bytes[name] = op.bytes();
        group_sizes[name] = members;
    }
    // Forward: rank 0's 16 samples of e's outputs into f, then its share of f's and g's neurons (16 x 64 x 2 bytes).
    REQUIRE(bytes.at("step0 all-gather inputs of f") == 16 * 64 * 2);
    REQUIRE(bytes.at("step0 all-gather neurons of g") == 16 * 64 * 2);
    REQUIRE(bytes.at("step0 all-gather neurons of h") == 16 * 64 * 2);
    // Backward: the group's 64 samples' input gradients: all-reduced into g and f, reduce-scattered into e.
    REQUIRE(bytes.at("step0 all-reduce input gradients of h") == 4 * 16 * 64 * 2);
    REQUIRE(bytes.at("step0 all-reduce input gradients of g") == 4 * 16 * 64 * 2);
    REQUIRE(bytes.at("step0 reduce-scatter input gradients of f") == 4 * 16 * 64 * 2);
    for (const auto& [name, members] : group_sizes) REQUIRE(members == 4);
    // Gradients (fp32): a to e over all 8 ranks, a quarter of f to h over the 2 ranks holding that quarter.
    REQUIRE(reduced_world == 4 * (1000 + 2000 + 3000 + 4000 + 5000));
    REQUIRE(reduced_shard == 4 * (6000 + 7000 + 8000) / 4);
    REQUIRE(params == 4 * (15000 + 21000 / 4));
    // The same FLOPs per rank as data parallelism: a quarter of the neurons for four times the samples.
    const auto dp = generate("");
    double flops = 0, dp_flops = 0;
    for (const auto& op : g.ops)
        if (g.rank_of(op).value == 0) flops += op.flops();
    for (const auto& op : dp.ops)
        if (dp.rank_of(op).value == 0) dp_flops += op.flops();
    REQUIRE(flops == Approx(dp_flops));
}

TEST_CASE("model-parallel layers reject impossible plans at the key", "[workloads][layers][model_parallel]") {
    REQUIRE_THROWS_WITH(generate(", mp: 4"), Catch::Matchers::Contains("name that layer"));
    REQUIRE_THROWS_WITH(generate(", mp: 4, mp_from: z"), Catch::Matchers::Contains("no layer named 'z'"));
    REQUIRE_THROWS_WITH(generate(", mp: 4, mp_from: a"), Catch::Matchers::Contains("name a later layer"));
    REQUIRE_THROWS_WITH(generate(", mp: 3, mp_from: f"),
                        Catch::Matchers::Contains("groups of 3 do not split dp = 8 ranks"));
    REQUIRE_THROWS_WITH(generate(", mp_from: f"), Catch::Matchers::Contains("it needs mp above 1"));
    REQUIRE_THROWS_WITH(generate(", mp: 2, mp_from: f, pp: 2"), Catch::Matchers::Contains("without pp"));
}
