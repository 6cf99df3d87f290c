// Federated rounds with a deadline (layers generator's round_deadline and dropped_clients, sim/scenario/
// round_deadline): a dropped client leaves the round's average and must download the model before its next round;
// the probe run drops exactly the clients a straggler makes late; located errors.
#include <string>

#include <catch2/catch.hpp>

#include "sim/scenario/scenario.h"
#include "tests/workloads/generate.h"

using namespace clustersim;
using traces::OpKind;

namespace {

std::size_t count_named(const traces::OpGraph& g, std::uint32_t rank, const std::string& prefix) {
    std::size_t n = 0;
    for (const auto& op : g.ops)
        if (g.rank_of(op).value == rank && g.names[op.name].rfind(prefix, 0) == 0) ++n;
    return n;
}

}  // namespace

TEST_CASE("a dropped client leaves the round's average and downloads the model for its next round",
          "[workloads][layers][federated]") {
    // Every rank is a client of both rounds (8 of 8); rank 3's update of round 0 is dropped.
    const auto g = testing::generate("layers",
                                     "{generator: layers, dp: 8, steps: 4, local_steps: 2, clients_per_round: 8, "
                                     "dropped_clients: \"0:3\"}");
    for (const auto& op : g.ops) {
        if (g.names[op.name] != "round0 average") continue;
        REQUIRE(g.rank_of(op).value != 3);
        REQUIRE(g.comms[op.comm().index()].ranks.size() == 7);
    }
    REQUIRE(count_named(g, 3, "round0 update dropped") == 1);
    REQUIRE(count_named(g, 3, "round0 average") == 0);
    REQUIRE(count_named(g, 3, "round1 average") == 1);
    // Round 1: rank 3 alone receives the model, from rank 0 (the first on-time client of round 0).
    REQUIRE(count_named(g, 3, "round1 model from rank 0") == 1);
    for (std::uint32_t r = 0; r < 8; ++r)
        if (r != 3) REQUIRE(count_named(g, r, "round1 model from") == 0);
    REQUIRE(count_named(g, 0, "round1 model to rank 3") == 1);
}

TEST_CASE("the deadline's probe run drops the clients a straggler makes late", "[workloads][layers][federated]") {
    // 8 ResNet-50 clients on one DGX-A100 node, 2 rounds of 2 local steps (about 33 ms of work), rank 5 at half
    // speed (about 67 ms): a 50 ms deadline drops rank 5 in both rounds (in round 1 it also downloads the model).
    const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/12-resnet50-local-sgd/scenario.yaml";
    const std::vector<std::string> plan = {"workload.dp=8", "workload.steps=4", "workload.local_steps=2",
                                           "workload.clients_per_round=8",
                                           "system.stragglers=[{ranks: [5], slowdown: 2}]"};
    auto with = [&](const std::string& deadline) {
        auto sets = plan;
        sets.push_back("workload.round_deadline=" + deadline);
        return sim::load_scenario(path, sets);
    };
    const auto dropped = with("50 ms");
    REQUIRE(count_named(dropped.graph, 5, "round0 update dropped") == 1);
    REQUIRE(count_named(dropped.graph, 5, "round1 update dropped") == 1);
    for (std::uint32_t r = 0; r < 8; ++r) {
        if (r == 5) continue;
        REQUIRE(count_named(dropped.graph, r, "round0 update dropped") == 0);
        REQUIRE(count_named(dropped.graph, r, "round1 update dropped") == 0);
    }
    bool listed = false;
    for (const auto& line : dropped.graph.derived) listed = listed || line.rfind("dropped clients: 0:5, 1:5 (", 0) == 0;
    REQUIRE(listed);
    // Without the deadline (or with one nobody misses) the straggler holds every round back: the run is longer.
    const auto kept = with("1 s");
    REQUIRE(count_named(kept.graph, 5, "round0 update dropped") == 0);
    REQUIRE(sim::run_scenario(dropped).replay.timeline.makespan < sim::run_scenario(kept).replay.timeline.makespan);
}

TEST_CASE("federated deadlines reject impossible plans at the key", "[workloads][layers][federated]") {
    auto generate = [](const std::string& more) {
        return testing::generate("layers", "{generator: layers, dp: 8, steps: 4, local_steps: 2" + more + "}");
    };
    REQUIRE_THROWS_WITH(generate(", round_deadline: 10 ms"), Catch::Matchers::Contains("it needs clients_per_round"));
    REQUIRE_THROWS_WITH(generate(", clients_per_round: 4, dropped_clients: \"0-3\""),
                        Catch::Matchers::Contains("expected ROUND:RANK pairs"));
    REQUIRE_THROWS_WITH(generate(", clients_per_round: 4, dropped_clients: \"2:3\""),
                        Catch::Matchers::Contains("2:3: there are 2 rounds of ranks 0 to 7"));
    REQUIRE_THROWS_WITH(generate(", clients_per_round: 2, dropped_clients: \"0:0, 0:1, 0:2, 0:3, 0:4, 0:5, 0:6, 0:7\""),
                        Catch::Matchers::Contains("round 0: every client missed the deadline"));
}
