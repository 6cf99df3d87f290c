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
