#include <filesystem>

#include <catch2/catch.hpp>

#include "engine/error.h"
#include "sim/scenario/scenario.h"
#include "tests/test_support.h"
#include "traces/summary_compare.h"
#include "traces/summary_reader.h"
#include "traces/summary_writers.h"

using namespace clustersim;
using Catch::Matchers::Contains;

namespace {
const std::string example = std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";

/// The line of `table` that starts (after its indent) with `name`.
std::string line_of(const std::string& table, const std::string& name) {
    const std::size_t at = table.find("\n  " + name + " ");
    REQUIRE(at != std::string::npos);
    return table.substr(at + 1, table.find('\n', at + 1) - at - 1);
}
}  // namespace

TEST_CASE("summary.json reads back into the summary it was written from", "[compare]") {
    const auto scenario = sim::load_scenario(example, {});
    const auto result = sim::run_scenario(scenario);
    const std::string path = testing::write_temp_file("clustersim-summary-roundtrip.json",
                                                      traces::summary_json(result.summary, scenario.graph));
    traces::RunSummary expected = result.summary;
    expected.critical_path.steps.clear();  // the ops of the path are not read back,
    expected.collectives.clear();          // nor the report-only table of collective calls
    const traces::RunSummary read = traces::read_summary_json(path);
    REQUIRE(read == expected);
    // And the same run compared with itself changes nothing.
    const std::string table = traces::compare_table(read, read, "a", "a");
    for (const char* name : {"iteration", "compute", "exposed communication", "network wait", "bubble"})
        REQUIRE(line_of(table, name).find(" =") != std::string::npos);
}

TEST_CASE("a slower NIC shows in compare as more exposed communication and network wait", "[compare]") {
    const auto base = sim::load_scenario(example, {});
    const auto slow = sim::load_scenario(example, {"topology.nic_bandwidth=100 Gb/s"});
    const auto a = sim::run_scenario(base).summary, b = sim::run_scenario(slow).summary;
    const std::string table = traces::compare_table(a, b, "base", "slow");
    REQUIRE(b.makespan > a.makespan);
    REQUIRE(line_of(table, "iteration").find('+') != std::string::npos);
    REQUIRE(line_of(table, "exposed communication").find('+') != std::string::npos);
    REQUIRE(line_of(table, "network wait").find('+') != std::string::npos);
    // Compute does not change.
    REQUIRE(line_of(table, "compute").find(" =") != std::string::npos);
}

TEST_CASE("compare refuses a file that is not a summary, naming it and the key", "[compare]") {
    const std::string path = testing::write_temp_file("clustersim-not-a-summary.json", R"({"scenario": "x"})");
    REQUIRE_THROWS_WITH(traces::read_summary_json(path),
                        Contains("clustersim-not-a-summary.json") && Contains("missing \"topology\""));
    const std::string bad = testing::write_temp_file(
        "clustersim-bad-summary.json", R"({"scenario": "x", "topology": "t", "workload": "w", "makespan_us": "soon"})");
    REQUIRE_THROWS_WITH(traces::read_summary_json(bad), Contains("makespan_us") && Contains("expected a number"));
}
