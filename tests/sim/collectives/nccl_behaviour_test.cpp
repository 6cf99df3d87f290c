// NCCL's behaviour beyond its tuner's pick: the alternatives as simulated, point-to-point protocol costs, the
// receiver's reduction time, per-member sizes, and the choice on fabrics of direct cables.
#include <cstdlib>

#include <catch2/catch.hpp>

#include "sim/collective_sweep.h"
#include "sim/collectives/collective_algorithm.h"
#include "tests/sim/replay_fixture.h"

using namespace clustersim;
using namespace std::chrono_literals;
using engine::Time;
using traces::CollectiveKind;

TEST_CASE("the collective table shows NCCL's pick and the fastest of its alternatives as simulated",
          "[sim][collectives][nccl]") {
    // 4 DGX-H100 nodes, 256 MiB all-reduce: NCCL's model picks the ring (Simple), but simulated, its double tree
    // is faster; the row says both, and the fastest is exactly the forced double tree's run.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=4"});
    sim::CollectiveSweepOptions options;
    options.min_bytes = options.max_bytes = 256ULL << 20;
    const auto row = sim::run_collective_sweep(cluster, options).front();
    REQUIRE(row.algorithm == "ring");
    REQUIRE(row.fastest_algorithm == "double_tree");
    REQUIRE(row.fastest_time < row.time);
    options.replay.algorithm = sim::find_collective_algorithm("double_tree");
    const auto forced = sim::run_collective_sweep(cluster, options).front();
    REQUIRE(forced.time == row.fastest_time);
    REQUIRE(forced.fastest_algorithm == "double_tree");  // no comparison when the algorithm is forced
    REQUIRE(forced.fastest_time == forced.time);
}

TEST_CASE("all-to-all pays NCCL's point-to-point protocol costs", "[sim][collectives][nccl]") {
    // One DGX-H100 node, default options (protocols on). An 8-byte all-to-all: Simple's base latency 8.4 us, the
    // NVLink hop's Simple latency 3.4 us and the route's 2 x 150 ns: 12.1 us (with protocols off, 0.3 us and a
    // few ps). A 128 MiB one moves (n-1)/n of each buffer at no more than 0.824 of the NVLink: busbw under 370.8.
    const auto node = topo::load_topology("dgx-h100", {"nodes=1"});
    auto run = [&](std::uint64_t bytes, bool protocols) {
        testing::GraphBuilder b(8);
        std::vector<std::uint32_t> members{0, 1, 2, 3, 4, 5, 6, 7};
        for (std::uint32_t r = 0; r < 8; ++r)
            b.collective(r, "a2a", "world", members, bytes, CollectiveKind::all_to_all);
        sim::ReplayOptions options;
        options.protocols = protocols;
        return sim::replay(b.g, node, options).timeline.makespan;
    };
    REQUIRE(std::abs(run(8, true).count() - 12'100'000) <= 100);  // plus the bytes' wire time
    REQUIRE(run(8, false) < Time{310'000});
    const double s = 128.0 * (1 << 20);
    const double busbw = 7.0 / 8.0 * s / engine::to_seconds(run(128u << 20, true)) / 1e9;
    REQUIRE(busbw < 370.8);
    REQUIRE(busbw > 330.0);
}

TEST_CASE("all_to_allv and all_gatherv run with each member's own size", "[sim][collectives]") {
    // Member i sends b_i: all-to-all spreads it evenly over all n members (its own share stays), all-gather sends
    // all of it to every other member. Bytes are conserved exactly, per algorithm.
    auto run = [](const topo::Cluster& cluster, std::uint32_t n, CollectiveKind kind, std::uint64_t unit,
                  const char* algorithm) {
        testing::GraphBuilder b(n);
        std::vector<std::uint32_t> members;
        for (std::uint32_t r = 0; r < n; ++r) members.push_back(r);
        for (std::uint32_t r = 0; r < n; ++r) b.collective(r, "comm", "world", members, unit * (r + 1), kind);
        auto options = testing::exact_options();
        options.algorithm = sim::find_collective_algorithm(algorithm);
        return sim::replay(b.g, cluster, options);
    };
    const auto node = topo::load_topology("dgx-h100", {"nodes=1"});
    // 4 members, b_i = 4000 (i + 1): sum 40,000.
    REQUIRE(run(node, 4, CollectiveKind::all_to_all, 4000, "direct").bytes_on_network == 40'000 * 3 / 4);
    REQUIRE(run(node, 4, CollectiveKind::all_gather, 4000, "direct").bytes_on_network == 40'000 * 3);
    // Algorithms without a per-member form (the ring) fall back to direct.
    const auto ring = run(node, 4, CollectiveKind::all_gather, 4000, "ring");
    REQUIRE(ring.bytes_on_network == 40'000 * 3);
    REQUIRE(ring.collectives.front().algorithm == *sim::find_collective_algorithm("direct"));
    // PXN over 2 nodes of 8, b_i = 1600 (i + 1), sum 217,600: 7 of 16 pieces go directly inside the node, 7 to
    // the rail peers, and each rail peer forwards its node's 8 pieces for one remote member: (14 + 8)/16 of it.
    const auto two = topo::load_topology("dgx-h100", {"nodes=2"});
    const auto pxn = run(two, 16, CollectiveKind::all_to_all, 1600, "pxn");
    REQUIRE(pxn.collectives.front().algorithm == *sim::find_collective_algorithm("pxn"));
    REQUIRE(pxn.bytes_on_network == 217'600 * 22 / 16);
    // The last member sends the most: the call lasts at least its bytes over its link.
    REQUIRE(engine::to_seconds(run(node, 4, CollectiveKind::all_gather, 4000, "direct").timeline.makespan) >=
            3 * 16'000 / 450e9);
}

TEST_CASE("an all-reduce whose members give different sizes is an input error naming both", "[sim][collectives]") {
    testing::GraphBuilder b(2);
    b.collective(0, "comm", "world", {0, 1}, 1000);
    b.collective(1, "comm", "world", {0, 1}, 2000);
    REQUIRE_THROWS_WITH(traces::validate(b.g), Catch::Matchers::Contains("has 1000 bytes but") &&
                                                   Catch::Matchers::Contains("only all_gather and all_to_all"));
}

TEST_CASE("reducing transfers pay the receiver's reduction of its last slice", "[sim][collectives][nccl]") {
    // One DGX-H100 node, ring, Simple, 8 channels: a 16 MiB reduce-scatter and an all-gather of 2 MiB per rank
    // have the same 7 steps of 2 MiB (256 KiB per channel flow); only the reduce-scatter's receivers reduce, each
    // step's last slice (256 KiB, under the 512 KiB Simple step) at 3 bytes of HBM traffic per byte over 3.35 TB/s:
    // 7 x 3 x 262,144 / 3.35e12 s = 1.643 us more.
    const auto node = topo::load_topology("dgx-h100", {"nodes=1"});
    auto run = [&](CollectiveKind kind, std::uint64_t bytes) {
        testing::GraphBuilder b(8);
        std::vector<std::uint32_t> members{0, 1, 2, 3, 4, 5, 6, 7};
        for (std::uint32_t r = 0; r < 8; ++r) b.collective(r, "c", "world", members, bytes, kind);
        sim::ReplayOptions options;
        options.algorithm = sim::find_collective_algorithm("ring");
        options.protocol = sim::NcclProtocol::simple;
        return sim::replay(b.g, node, options).timeline.makespan;
    };
    const auto rs = run(CollectiveKind::reduce_scatter, 16u << 20);
    const auto ag = run(CollectiveKind::all_gather, 2u << 20);
    const double expected_ps = 7 * 3 * 262'144.0 / 3.35e12 * 1e12;
    REQUIRE(std::abs(static_cast<double>((rs - ag).count()) - expected_ps) <= 10);
}

TEST_CASE("on a ring of direct cables NCCL's choice is a ring, not a tree spanning many hops", "[sim][collectives]") {
    // 64 GPUs cabled in a ring (50 GiB/s, 500 ns per link): NCCL's model alone would pick the double tree for
    // 1 MiB, whose edges cross up to 32 cables; the graph search there finds rings only.
    const auto ring = topo::load_topology("ring", {"gpus=64", "bandwidth=50 GiB/s", "latency=500 ns"});
    sim::CollectiveSweepOptions options;
    options.min_bytes = options.max_bytes = 1u << 20;
    options.compare_algorithms = false;
    REQUIRE(sim::run_collective_sweep(ring, options).front().algorithm == "ring");
    // On a switched node the tree stays available to the tuner.
    const auto node = topo::load_topology("dgx-h100", {"nodes=4"});
    options.min_bytes = options.max_bytes = 16u << 20;
    REQUIRE(sim::run_collective_sweep(node, options).front().algorithm == "double_tree");
}

TEST_CASE("a collective sweep hands each row over as soon as it is computed", "[sim][collectives]") {
    // The CLI prints and flushes each row from the sink, so a sweep killed midway keeps the rows it finished.
    struct Seen {
        std::vector<std::uint64_t> sizes;
    } seen;
    sim::CollectiveSweepOptions options;
    options.min_bytes = 1024;
    options.max_bytes = 1u << 20;
    options.factor = 32;
    options.compare_algorithms = false;
    const auto rows =
        sim::run_collective_sweep(topo::load_topology("dgx-h100", {"nodes=1"}), options,
                                  sim::RowSink{[](void* context, const sim::CollectiveRow& row) {
                                                   static_cast<Seen*>(context)->sizes.push_back(row.bytes);
                                               },
                                               &seen});
    REQUIRE(seen.sizes == std::vector<std::uint64_t>{1024, 32768, 1u << 20});
    REQUIRE(rows.size() == 3);
}
