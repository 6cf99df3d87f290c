#include <filesystem>

#include <catch2/catch.hpp>

#include "tests/test_support.h"
#include "traces/analysis/trace_analysis.h"
#include "traces/report/categories.h"

using namespace clustersim;
using namespace std::chrono_literals;
using engine::Time;

namespace {
constexpr Time us(std::int64_t v) { return Time{v * 1'000'000}; }
}  // namespace

TEST_CASE("analyze: a hand-made two-rank trace gives HTA's figures exactly", "[analyze]") {
    // Rank 0: gemm_a [1001, 1011), the all-reduce [1005, 1020), gemm_b [1032, 1040) launched at 1032.
    // Rank 1: gemm_a [1001, 1005), gemm_c [1010, 1012) launched at 1008, the all-reduce [1013, 1020).
    const auto a = traces::analysis::analyze_kineto(
        {testing::test_data("traces/analyze_rank0.json"), testing::test_data("traces/analyze_rank1.json")}, {});
    REQUIRE(a.ranks.size() == 2);
    const auto& r0 = a.ranks[0];
    CHECK(r0.span == us(39));
    CHECK(r0.idle == us(12));     // 1020 to 1032
    CHECK(r0.compute == us(18));  // both GEMMs
    CHECK(r0.non_compute == us(9));
    CHECK(r0.communication_overlapped == us(6));  // the all-reduce beside gemm_a, [1005, 1011)
    CHECK(r0.overlap_fraction() == Approx(0.4));
    CHECK(r0.host_wait == us(21));  // gemm_b's launch returned at 1032, 21 us after gemm_a ended
    CHECK(r0.other_wait == Time{0});
    const auto& r1 = a.ranks[1];
    CHECK(r1.span == us(19));
    CHECK(r1.idle == us(6));
    CHECK(r1.host_wait == us(3));   // 1005 to gemm_c's launch at 1008
    CHECK(r1.other_wait == us(2));  // launched, not started until 1010
    CHECK(r1.overlap_fraction() == 0);
    // Launch delays: 0, 2 and 0 us on each rank.
    CHECK(a.launches[0].kernels == 3);
    CHECK(a.launches[0].max == us(2));
    CHECK(a.launches[0].p50 == Time{0});
    // Rank 1 reached the all-reduce 8 us after rank 0.
    REQUIRE(a.stragglers.size() == 2);
    CHECK(a.stragglers[0].rank == 1);
    CHECK(a.stragglers[0].total_lateness == us(8));
    CHECK(a.stragglers[0].last_to_arrive == 1);
    // 1 MB per rank in 11 us of kernel on average, bus factor 1 for two ranks: 90.9 GB/s.
    REQUIRE(a.communicators.size() == 1);
    CHECK(a.communicators[0].bytes == 1'000'000);
    CHECK(a.communicators[0].kernel_time == us(11));
    CHECK(a.communicators[0].skew == us(8));
    CHECK(a.communicators[0].busbw_gbps == Approx(1e6 / 11e-6 / 1e9));
    // The simulation's partition of the same trace, over the iteration from the step's start (1000) to the last
    // kernel's end (1040), as the replay counts the traced iteration: rank 0 waits for rank 1 from gemm_a's end to
    // 1013 inside the all-reduce, then transfers; rank 1 finishes 20 us before rank 0.
    const auto& p0 = a.summary.ranks[0];
    CHECK(a.summary.makespan == us(40));
    CHECK(p0.iteration == us(40));
    CHECK(p0.compute == us(18));
    CHECK(p0.peer_wait == us(2));
    CHECK(p0.exposed_communication == us(7));
    CHECK(p0.idle_other == us(13));
    const auto& p1 = a.summary.ranks[1];
    CHECK(p1.finished_early == us(20));
    CHECK(p1.exposed_communication == us(7));
    CHECK(p1.idle_other == us(7));
}

TEST_CASE("analyze: the real Kineto traces hold the definitions' identities", "[analyze]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: skipped");
        return;
    }
    const std::string dir = testing::shared_data("kineto/dlrm_v100_8ranks");
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    const auto a = traces::analysis::analyze_kineto(files, {});
    REQUIRE(a.ranks.size() == 8);
    for (const auto& r : a.ranks) {
        INFO("rank " << r.rank);
        CHECK(r.idle + r.compute + r.non_compute == r.span);
        CHECK(r.communication_overlapped <= r.communication);
        CHECK(r.communication - r.communication_overlapped <= r.non_compute);  // the rest is non-compute time
    }
    for (const auto& b : a.summary.ranks) {
        Time sum{0};
        for (const Time t : traces::report::partition(b)) sum += t;
        CHECK(sum == b.iteration);
        CHECK(b.idle_other >= Time{0});
    }
    // Every collective kernel of the trace is in a communicator's row.
    std::uint64_t calls = 0;
    for (const auto& c : a.communicators) calls += c.calls * c.ranks;
    CHECK(calls > 0);
}
