#include <catch2/catch.hpp>

#include "sim/scenario/scenario.h"
#include "sim/sweep/filter_expression.h"
#include "sim/sweep/sweep_spec.h"
#include "tests/test_support.h"

using namespace clustersim;
using Catch::Matchers::Contains;

namespace {
bool passes(const std::string& expression, const sim::SweepPoint& point) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : point) keys.push_back(k);
    return sim::FilterExpression(expression, keys, engine::SourceLocation{"test"}).accepts(point);
}
}  // namespace

TEST_CASE("sweep filters: arithmetic, comparisons, logic and text", "[sweep]") {
    const sim::SweepPoint p = {{"workload.tp", "4"}, {"workload.pp", "8"}, {"system.algo", "ring"}};
    CHECK(passes("workload.tp * workload.pp <= 32", p));
    CHECK_FALSE(passes("workload.tp * workload.pp < 32", p));
    CHECK(passes("1 + 2 * 3 == 7", p));  // precedence
    CHECK(passes("(1 + 2) * 3 == 9", p));
    CHECK(passes("workload.pp % workload.tp == 0 and not workload.tp > 4", p));
    CHECK(passes("workload.tp == 2 || system.algo == 'ring'", p));
    CHECK_FALSE(passes("system.algo != 'ring'", p));
    CHECK(passes("-workload.tp < 0", p));
    CHECK(passes("!(workload.tp == 3)", p));
    CHECK_THROWS_WITH(passes("workload.dp > 1", p), Contains("'workload.dp' is not an axis of the sweep"));
    CHECK_THROWS_WITH(passes("workload.tp <> 1", p), Contains("at character 14: unexpected '>'"));
    CHECK_THROWS_WITH(passes("(workload.tp", p), Contains("expected ')'"));
    CHECK_THROWS_WITH(passes("system.algo < 3", p), Contains("'<' needs numbers"));
}

TEST_CASE("sweep grids: axes vary slowest first, zip groups together, the filter keeps grid indices", "[sweep]") {
    const std::string scenario =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";
    const std::string file = testing::write_temp_file("clustersim-sweep-grid.yaml", "base: " + scenario + R"(
axes:
  a.x: [1, 2]
  a.y: [10, 20, 30]
zip:
  - {b.p: [4, 2], b.q: [4, 8]}
filter: "a.y != 20"
)");
    const sim::SweepSpec spec = sim::load_sweep(file);
    REQUIRE(spec.keys() == std::vector<std::string>{"a.x", "a.y", "b.p", "b.q"});
    const auto points = sim::sweep_points(spec);
    // 2 x 3 x 2 = 12 grid points, 4 of them with a.y = 20 filtered out.
    REQUIRE(points.size() == 8);
    CHECK(points[0].first == 0);
    CHECK(points[0].second == sim::SweepPoint{{"a.x", "1"}, {"a.y", "10"}, {"b.p", "4"}, {"b.q", "4"}});
    CHECK(points[1].second == sim::SweepPoint{{"a.x", "1"}, {"a.y", "10"}, {"b.p", "2"}, {"b.q", "8"}});
    CHECK(points[2].first == 4);  // 2 and 3 have a.y = 20
    CHECK(points[2].second[1].second == "30");
    CHECK(points.back().first == 11);
    CHECK(spec.metrics.front() == "iteration_us");  // the default metrics
}

TEST_CASE("sweep files are checked before any point runs", "[sweep]") {
    const std::string scenario =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";
    auto load = [&](const std::string& body) {
        return sim::load_sweep(
            testing::write_temp_file("clustersim-sweep-bad.yaml", "base: " + scenario + "\n" + body));
    };
    CHECK_THROWS_WITH(load("axes: {a: []}"), Contains("axis 'a' has no values"));
    CHECK_THROWS_WITH(load("axes: {a: [[1, 2]]}"), Contains("expected a single value"));
    CHECK_THROWS_WITH(load("zip: [{a: [1, 2], b: [1]}]"), Contains("zip: axis 'b' has 1 values, 'a' has 2"));
    CHECK_THROWS_WITH(load("axes: {a: [1]}\nmetrics: [speed]"), Contains("unknown metric 'speed'"));
    CHECK_THROWS_WITH(load("metrics: [mfu]"), Contains("the sweep has no axes"));
    CHECK_THROWS_WITH(load("axes: {a: [1]}\nextra: 1"), Contains("extra"));
    // A fuzzing finding: a base path too long for the file system threw a filesystem_error (exit 4).
    CHECK_THROWS_WITH(sim::load_sweep(testing::write_temp_file("clustersim-sweep-long.yaml",
                                                               "base: " + std::string(5000, 'e') + "\naxes: {a: [1]}")),
                      Contains("is not a file"));
    // A key the scenario does not have, or a value of the wrong type, is the sweep file's error.
    const sim::SweepSpec spec = load("axes: {workload.pp: [4, x]}");
    CHECK_THROWS_WITH(
        sim::check_sweep_values(spec, [&](const std::string& a) { (void)sim::load_scenario(spec.base, {a}); }),
        Contains("workload.pp: value x: expected an integer"));
}
