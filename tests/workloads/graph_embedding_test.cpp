// The graph_embedding generator and its bucket orderings against closed forms: every bucket trained once per epoch
// with both partitions buffered and the buffer never over capacity; hand-counted swaps for small cases; a buffer of
// every partition loads each once; the buffer-aware order never swaps more than the sequential one; load sizes and
// bucket FLOPs; with computation free, loads one after the other at the PCIe path's speed; located errors.
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "sim/scenario/scenario.h"
#include "tests/workloads/generate.h"
#include "workloads/embeddings/partition_order.h"

using namespace clustersim;
using workloads::PartitionOrdering;

namespace {

struct Counts {
    std::size_t loads = 0, evictions = 0;
};

// Replays the swaps, checking that each bucket's partitions are buffered when it trains, the buffer stays within
// capacity, and every bucket trains once per epoch.
Counts check_order(std::uint32_t p, std::uint32_t c, PartitionOrdering ordering, std::uint32_t epochs) {
    const auto order = workloads::order_buckets(p, c, ordering, epochs);
    REQUIRE(order.size() == std::size_t{p} * p * epochs);
    std::set<std::uint32_t> buffer;
    Counts counts;
    for (std::uint32_t e = 0; e < epochs; ++e) {
        std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
        for (std::size_t k = std::size_t{e} * p * p; k < std::size_t{e + 1} * p * p; ++k) {
            for (const auto& s : order[k].swaps) {
                if (s.out != UINT32_MAX) {
                    REQUIRE(buffer.erase(s.out) == 1);
                    ++counts.evictions;
                }
                REQUIRE(buffer.insert(s.in).second);
                REQUIRE(buffer.size() <= c);
                ++counts.loads;
            }
            REQUIRE(buffer.count(order[k].lhs) == 1);
            REQUIRE(buffer.count(order[k].rhs) == 1);
            REQUIRE(seen.insert({order[k].lhs, order[k].rhs}).second);
        }
    }
    return counts;
}

engine::Time run(std::vector<std::string> sets) {
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/25-graph-embedding-partitions/scenario.yaml";
    return sim::run_scenario(sim::load_scenario(path, sets)).replay.timeline.makespan;
}

}  // namespace

TEST_CASE("bucket orders train every bucket once with its partitions buffered", "[workloads][embedding]") {
    for (const auto ordering : {PartitionOrdering::sequential, PartitionOrdering::buffer_aware}) {
        for (const auto& [p, c] : {std::pair{3U, 2U}, {5U, 2U}, {8U, 3U}, {16U, 8U}, {16U, 16U}, {1U, 1U}}) {
            INFO(int(ordering) << " P " << p << " C " << c);
            const Counts one = check_order(p, c, ordering, 1);
            if (c == p) {
                REQUIRE(one.loads == p);  // each partition once, nothing evicted
                REQUIRE(one.evictions == 0);
            }
            (void)check_order(p, c, ordering, 3);  // the buffer carries over between epochs
        }
    }
    // By hand: P 3, C 2. Sequential (row by row, LRU): loads 0, 1, 2 (evicting 1), 1 (2), 2 (0), 0 (1), 1 (0).
    const Counts seq = check_order(3, 2, PartitionOrdering::sequential, 1);
    REQUIRE(seq.loads == 7);
    REQUIRE(seq.evictions == 5);
    // Buffer-aware: 0 and 1 (4 buckets), 2 for 0 (3 more), 0 for 1 (the last 2).
    const Counts aware = check_order(3, 2, PartitionOrdering::buffer_aware, 1);
    REQUIRE(aware.loads == 4);
    REQUIRE(aware.evictions == 2);
    for (const auto& [p, c] : {std::pair{8U, 2U}, {16U, 4U}, {16U, 8U}, {32U, 6U}}) {
        INFO("P " << p << " C " << c);
        REQUIRE(check_order(p, c, PartitionOrdering::buffer_aware, 1).loads <=
                check_order(p, c, PartitionOrdering::sequential, 1).loads);
    }
}

TEST_CASE("graph_embedding: loads, buckets and their kernels meet the closed forms", "[workloads][embedding]") {
    const auto g = testing::generate("graph_embedding",
                                     "{generator: graph_embedding, nodes: 1000000, edges: 6400000, dim: 64, "
                                     "partitions: 4, buffer: 2, negatives: 10}");
    const double partition_bytes = 2 * 1e6 / 4 * 64 * 4;  // embeddings and Adagrad state, fp32
    const double bucket_edges = 6.4e6 / 16;
    std::size_t loads = 0, evictions = 0, buckets = 0;
    for (const auto& op : g.ops) {
        const std::string& name = g.names[op.name];
        if (op.kind == traces::OpKind::memcpy_h2d) {
            ++loads;
            REQUIRE(op.bytes() == static_cast<std::uint64_t>(partition_bytes));
        }
        if (op.kind == traces::OpKind::memcpy_d2h) ++evictions;
        if (name.size() > 7 && name.compare(name.size() - 7, 7, " scores") == 0) {
            ++buckets;
            REQUIRE(op.flops() == Approx(6 * bucket_edges * 10 * 64));
        }
        if (op.kind == traces::OpKind::alloc) REQUIRE(op.bytes() == static_cast<std::uint64_t>(2 * partition_bytes));
    }
    REQUIRE(buckets == 16);
    const Counts counts = check_order(4, 2, PartitionOrdering::buffer_aware, 1);
    REQUIRE(loads == counts.loads);
    REQUIRE(evictions == counts.evictions);
}

TEST_CASE("graph_embedding with computation free: the loads run back to back", "[workloads][embedding]") {
    // One partition of 25 M nodes alone, then four of them with room for all: four loads of the same bytes, one
    // after the other on the host-to-GPU path, and nothing else (every kernel takes no time).
    const std::vector<std::string> free = {"system.compute_scale=0", "workload.negatives=0"};
    auto with = [&](std::vector<std::string> more) {
        more.insert(more.end(), free.begin(), free.end());
        return run(more);
    };
    const engine::Time one = with({"workload.nodes=25000000", "workload.partitions=1", "workload.buffer=1"});
    const engine::Time four = with({"workload.nodes=100000000", "workload.partitions=4", "workload.buffer=4"});
    REQUIRE(one.count() > 0);
    REQUIRE(four.count() == Approx(4.0 * double(one.count())).epsilon(1e-9));
}

TEST_CASE("graph_embedding rejects impossible plans at the key", "[workloads][embedding]") {
    auto generate = [](const std::string& more) {
        return testing::generate("graph_embedding", "{generator: graph_embedding, " + more + "}");
    };
    REQUIRE_THROWS_WITH(generate("buffer: 1"), Catch::Matchers::Contains("a buffer of at least 2 partitions"));
    REQUIRE_THROWS_WITH(generate("buffer: 20"),
                        Catch::Matchers::Contains("20 partitions in the buffer, but the graph has 16"));
    REQUIRE_THROWS_WITH(generate("ordering: random"), Catch::Matchers::Contains("unknown ordering 'random'"));
}
