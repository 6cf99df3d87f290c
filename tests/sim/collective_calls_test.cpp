#include <catch2/catch.hpp>

#include "sim/collective_calls.h"
#include "sim/scenario/scenario.h"
#include "tests/sim/replay_fixture.h"

using namespace clustersim;
using engine::Time;

TEST_CASE("collective calls: the example ring all-reduce against its closed form", "[report]") {
    // Eight GPUs in a 100 GB/s ring (1 us per link) all-reduce 80 MB; rank 5 arrives 50 us after the others. Once it
    // is there, 2(n-1) steps of alpha + S/(nB) = 14 x 101 us = 1,414 us (docs/examples/02-ring-allreduce-8gpu).
    const auto scenario = sim::load_scenario(
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/02-ring-allreduce-8gpu/scenario.yaml", {});
    const auto result = sim::run_scenario(scenario);
    REQUIRE(result.summary.collectives.size() == 1);
    const traces::CollectiveCalls& c = result.summary.collectives.front();
    CHECK(c.group == "world");
    CHECK(c.algorithm == "ring");
    CHECK(c.protocol == "-");
    CHECK(c.members == 8);
    CHECK(c.calls == 1);
    CHECK(c.bytes == 80'000'000);
    CHECK(c.waiting == Time{50'000'000});
    CHECK(c.transferring == Time{1'414'000'000});
    // nccl-tests' bus bandwidth: S x 2(n-1)/n / t = 80 MB x 1.75 / 1,414 us.
    CHECK(c.busbw_gbps == Approx(80e6 * 1.75 / 1414e-6 / 1e9).epsilon(1e-12));
}

TEST_CASE("collective calls: a one-member communicator's call is counted, with no time", "[report]") {
    // Rank 0 all-reduces alone ("solo") after 3 us of compute, then with rank 1 ("pair"): both calls ran.
    testing::GraphBuilder b(2);
    b.compute(0, "main", Time{3'000'000});
    b.collective(0, "main", "solo", {0}, 1'000'000);
    for (std::uint32_t r = 0; r < 2; ++r) b.collective(r, "main", "pair", {0, 1}, 1'000'000);
    const auto cluster = testing::ring_cluster(2, "50 GB/s", "1 us");
    const auto result = sim::replay(b.g, cluster, testing::exact_options());
    const auto rows = sim::collective_calls(b.g, result.collectives);
    REQUIRE(rows.size() == 2);
    const auto solo = rows[0].group == "solo" ? rows[0] : rows[1];
    CHECK(solo.group == "solo");
    CHECK(solo.members == 1);
    CHECK(solo.calls == 1);
    CHECK(solo.waiting == Time{0});
    CHECK(solo.transferring == Time{0});
    CHECK(solo.busbw_gbps == 0);
    CHECK(result.collectives[0].end == Time{3'000'000});
}

TEST_CASE("collective calls: a call that repeats an earlier one's plan runs as that one did", "[sim][replay]") {
    // One GPU of each of four DGX-H100 nodes all-reduces 4 MiB, 1 MiB, 4 MiB and 1 MiB on NCCL's double tree, 1 ms
    // of compute apart (each call ends before the next starts). The third and fourth calls reuse the listed plans
    // (and the executor's arrays) of the first two: each must take, to the picosecond, what its first did, and the
    // two sizes must differ (a plan kept under the wrong size would give the 1 MiB call the 4 MiB call's time).
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=4"});
    testing::GraphBuilder b(32);
    const std::vector<std::uint32_t> members = {0, 8, 16, 24};
    for (const std::uint32_t r : members) {
        for (const std::uint64_t bytes : {4ULL << 20, 1ULL << 20, 4ULL << 20, 1ULL << 20}) {
            b.collective(r, "main", "dp", members, bytes);
            b.compute(r, "main", Time{1'000'000'000});
        }
    }
    sim::ReplayOptions options;
    options.algorithm = sim::find_collective_algorithm("double_tree");
    const auto result = sim::replay(b.g, cluster, options);
    REQUIRE(result.collectives.size() == 4);
    std::vector<Time> took;
    for (const auto& call : result.collectives) {
        CHECK(call.algorithm == *options.algorithm);
        CHECK(call.first_arrival == call.last_arrival);
        took.push_back(call.end - call.last_arrival);
    }
    CHECK(took[2] == took[0]);
    CHECK(took[3] == took[1]);
    CHECK(took[1] < took[0]);
    CHECK(result.collectives[3].end < Time{4'000'000'000});
}
