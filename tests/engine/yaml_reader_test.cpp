// YamlValue: located errors, unknown-key rejection, unit-typed reads and --set overrides.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "engine/yaml_reader.h"

using namespace clustersim::engine;
using Catch::Matchers::Contains;

TEST_CASE("typed reads carry file, line, column and key path in errors", "[engine][yaml]") {
    const auto doc =
        YamlValue::load_string("topology:\n  links:\n    - bandwidth: 400\n      latency: 1 us\n", "t.yaml");
    const auto link = doc.require("topology").require("links").elements().at(0);
    REQUIRE(link.require("latency").as_time() == Time{1'000'000});
    REQUIRE_THROWS_WITH(
        link.require("bandwidth").as_rate(),
        Contains("t.yaml:3:18: topology.links[0].bandwidth: expected a rate") && Contains("got \"400\""));
    REQUIRE_THROWS_WITH(link.require("kind"), Contains("t.yaml:3:7: topology.links[0]: missing required key 'kind'"));
}

TEST_CASE("unknown keys are rejected with the allowed ones listed", "[engine][yaml]") {
    const auto doc = YamlValue::load_string("nodes: 2\nnodez: 3\n", "s.yaml");
    REQUIRE_THROWS_WITH(doc.expect_only_keys({"nodes", "gpu"}),
                        Contains("s.yaml:2:1: nodez: unknown key 'nodez' (allowed: nodes, gpu)"));
}

TEST_CASE("a YAML syntax error names line and column", "[engine][yaml]") {
    REQUIRE_THROWS_WITH(YamlValue::load_string("a: [1, 2\n", "bad.yaml"),
                        Contains("bad.yaml:") && Contains("YAML syntax error"));
}

TEST_CASE("command-line overrides (--set) edit the tree before decoding and are located as --set", "[engine][yaml]") {
    auto doc = YamlValue::load_string("topology:\n  preset: dgx-h100\n  nodes: 2\nlist: [1, 2]\n", "s.yaml");
    doc.apply_override("topology.nodes=4");
    doc.apply_override("list[1]=7");
    doc.apply_override("system.seed=9");
    REQUIRE(doc.require("topology").require("nodes").as_int() == 4);
    REQUIRE(doc.require("list").elements().at(1).as_int() == 7);
    REQUIRE(doc.require("system").require("seed").as_int() == 9);
    doc.apply_override("topology.nodes=four");
    REQUIRE_THROWS_WITH(doc.require("topology").require("nodes").as_int(),
                        Contains("--set: topology.nodes: expected an integer, got \"four\""));
    REQUIRE_THROWS_WITH(doc.apply_override("nodes"), Contains("expected key=value"));
    REQUIRE_THROWS_WITH(doc.apply_override("list[5]=1"), Contains("no list element [5]"));
}

TEST_CASE("a key given twice in one map is a located error, not first-one-wins", "[engine][yaml][input]") {
    REQUIRE_THROWS_WITH(YamlValue::load_string("a: 1\nb: {c: 2, c: 3}\n", "dup.yaml"),
                        Contains("dup.yaml:2:11: c: duplicate key 'c' (first at line 2)"));
    REQUIRE_THROWS_WITH(YamlValue::load_string("a: 1\nlist: [{x: 1}]\na: 2\n", "dup.yaml"),
                        Contains("dup.yaml:3:1: a: duplicate key 'a' (first at line 1)"));
    REQUIRE_NOTHROW(YamlValue::load_string("a: {x: 1}\nb: {x: 1}\n", "ok.yaml"));
}

TEST_CASE("nested aliases are checked once each, not once per expansion (billion laughs)", "[engine][yaml][input]") {
    // Nine levels of ten aliases each expand to 10^9 scalars; the duplicate-key check visits each collection once.
    std::string text = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int level = 1; level < 9; ++level) {
        text += fmt::format("l{0}: &l{0} [", level);
        for (int k = 0; k < 10; ++k) text += fmt::format("{}*l{}", k ? ", " : "", level - 1);
        text += "]\n";
    }
    const auto doc = clustersim::engine::YamlValue::load_string(text + "top: {a: 1}\n", "laughs.yaml");
    REQUIRE(doc.require("top").require("a").as_int() == 1);
    REQUIRE_THROWS_WITH(clustersim::engine::YamlValue::load_string(text + "top: {a: 1, a: 2}\n", "laughs.yaml"),
                        Catch::Matchers::Contains("duplicate key 'a'"));
}
