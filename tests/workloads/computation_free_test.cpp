// With computation free (system.compute_scale: 0), a generator's run is its communication alone: on a ring of GPUs
// cabled directly, without protocol costs, every all-reduce is the alpha-beta ring 2(n-1)(a + S/(nB)) and a gossip
// round one message per cable direction, a + M/B; the run is those back to back, as each generator orders them.
#include <cmath>

#include <catch2/catch.hpp>

#include "sim/scenario/scenario.h"
#include "tests/test_support.h"

using namespace clustersim;

namespace {

constexpr double latency_s = 500e-9, bandwidth = 50e9;  // the ring's cables
constexpr std::uint32_t gpus = 8;
constexpr double resnet50_params = 25'557'032;

/// The run of a layers workload on the ring with computation free, and rank 0's collectives' sizes.
struct Run {
    double seconds = 0;
    std::vector<double> collective_bytes;
};

Run run(const std::string& workload) {
    const std::string yaml =
        "name: computation-free\n"
        "topology: {preset: ring, gpus: 8, bandwidth: 50 GB/s, latency: 500 ns}\n"
        "workload: " +
        workload +
        "\n"
        "system: {compute_scale: 0, collective_protocol: none, collective_algorithm: ring}\n";
    const auto scenario = sim::load_scenario(testing::write_temp_file("computation_free.yaml", yaml), {});
    const auto result = sim::run_scenario(scenario);
    Run r;
    r.seconds = engine::to_seconds(result.summary.makespan);
    for (const auto& op : scenario.graph.ops)
        if (scenario.graph.rank_of(op).value == 0 && op.kind == traces::OpKind::collective)
            r.collective_bytes.push_back(static_cast<double>(op.bytes()));
    return r;
}

/// The ring all-reduce of `bytes` per rank: 2(n-1) steps of a piece of bytes/n (pieces differ by a byte).
double ring_all_reduce(double bytes, bool larger_piece) {
    const double piece = larger_piece ? std::ceil(bytes / gpus) : std::floor(bytes / gpus);
    return 2.0 * (gpus - 1) * (latency_s + piece / bandwidth);
}

void require_sum_of_all_reduces(const Run& r) {
    double low = 0, high = 0;
    for (const double b : r.collective_bytes) {
        low += ring_all_reduce(b, false);
        high += ring_all_reduce(b, true);
    }
    INFO(r.collective_bytes.size() << " all-reduces; run " << r.seconds << " s, closed form " << low << " to " << high
                                   << " s");
    REQUIRE(r.collective_bytes.size() > 1);
    REQUIRE(r.seconds >= low - 1e-9);
    REQUIRE(r.seconds <= high + 1e-9);
}

}  // namespace

TEST_CASE("computation free: DDP's buckets are ring all-reduces back to back", "[workloads][timing]") {
    // Every bucket is ready at once (the backward is free) and the "dp" stream runs them in order; two steps.
    const Run r = run("{generator: layers, model: resnet50, dp: 8, steps: 2}");
    REQUIRE(r.collective_bytes.size() > 4);  // several buckets a step
    double total = 0;
    for (const double b : r.collective_bytes) total += b;
    REQUIRE(total == 2 * 4 * resnet50_params);  // fp32 gradients, twice
    require_sum_of_all_reduces(r);
}

TEST_CASE("computation free: local SGD is one parameter all-reduce per H steps", "[workloads][timing]") {
    const Run r = run("{generator: layers, model: resnet50, dp: 8, steps: 8, local_steps: 4}");
    REQUIRE(r.collective_bytes == std::vector<double>{4 * resnet50_params, 4 * resnet50_params});
    require_sum_of_all_reduces(r);
}

TEST_CASE("computation free: a gossip round on a ring is one message over each cable direction",
          "[workloads][timing]") {
    // Each rank sends its fp32 parameters to both neighbours: each direction of each cable carries one message at
    // once, and the next round waits for the mix (free): rounds x (a + M/B).
    const Run r = run("{generator: layers, model: resnet50, dp: 8, steps: 6, local_steps: 2, averaging: gossip}");
    const double round = latency_s + 4 * resnet50_params / bandwidth;
    REQUIRE(r.seconds == Approx(3 * round).epsilon(1e-9));
}
