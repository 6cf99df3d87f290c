// The memory budget: estimates refused with the figure and the option, inputs capped while read, topologies
// refused while built, and the scope an allocation failure happened in.
#include <catch2/catch.hpp>

#include "engine/error.h"
#include "engine/memory_budget.h"
#include "engine/yaml_reader.h"
#include "tests/test_support.h"
#include "topologies/topology_loader.h"
#include "traces/formats/trace_import.h"
#include "traces/text_file.h"

using namespace clustersim;
using Catch::Matchers::Contains;

namespace {
/// Sets the budget for one test and restores it after.
struct BudgetOf {
    std::uint64_t saved = engine::memory_budget();
    explicit BudgetOf(std::uint64_t bytes) { engine::set_memory_budget(bytes); }
    ~BudgetOf() { engine::set_memory_budget(saved); }
};
}  // namespace

TEST_CASE("an estimate beyond the budget is refused with the figure, the budget and the option that helps",
          "[engine][memory]") {
    const BudgetOf budget(1'000'000'000);
    engine::require_memory(0.9e9, "the plan", "fewer ranks", "plan.yaml");
    REQUIRE_THROWS_WITH(engine::require_memory(3e9, "the plan", "fewer ranks", "plan.yaml"),
                        "plan.yaml: the plan needs about 3.0 GB, more than the memory budget of 1.0 GB "
                        "(--max-memory): fewer ranks");
}

TEST_CASE("inputs are capped while read: a file past half the budget is refused, not read whole",
          "[engine][memory][input]") {
    const BudgetOf budget(2'000'000);
    const auto big = testing::write_temp_file("clustersim_big.json", std::string(1'500'000, ' '));
    REQUIRE_THROWS_WITH(traces::read_text_file(big),
                        Contains("clustersim_big.json: more than 1 MB of content: beyond half the memory budget"));
    const auto yaml = testing::write_temp_file("clustersim_big.yaml", "a: 1\n" + std::string(100'000, '#'));
    REQUIRE_THROWS_WITH(engine::YamlValue::load_file(yaml), Contains("clustersim_big.yaml: more than 0 MB of YAML"));
}

TEST_CASE("binary content that is no Chakra file is refused from its first bytes", "[traces][input]") {
    const auto zeros = testing::write_temp_file("clustersim_zeros.bin", std::string(8192, '\0'));
    REQUIRE_THROWS_WITH(traces::import_traces({zeros}, {}),
                        Contains("clustersim_zeros.bin: byte 0: binary content (0x00) that is no Chakra .et file"));
}

TEST_CASE("a topology past the budget is refused while it is built, at the preset", "[topo][memory][input]") {
    const BudgetOf budget(50'000'000);
    REQUIRE_THROWS_WITH(topo::load_topology("dgx-h100", {"nodes=4096"}),
                        Contains("(command line):1:1: the topology grows past") &&
                            Contains("beyond the memory budget of 50 MB (--max-memory); fewer nodes or spines"));
    REQUIRE(topo::load_topology("dgx-h100", {"nodes=16"}).gpus().size() == 128);
}

TEST_CASE("a SimAI job too large for the budget is refused before its groups are built", "[traces][memory][input]") {
    const BudgetOf budget(4'000'000'000);
    const auto path = testing::write_temp_file(
        "clustersim_simai_huge.txt", "DATA all_gpus: 1000000000\n1\nl1 -1 10 NONE 0 1 NONE 0 1 ALLREDUCE 64 1\n");
    REQUIRE_THROWS_WITH(traces::import_traces({path}, {}),
                        Contains("clustersim_simai_huge.txt: the workload (8 ops on 1 simulated ranks of 1000000000) "
                                 "needs about 12.0 GB, more than the memory budget"));
}

TEST_CASE("an allocation failure names the innermost scope it unwound", "[engine][memory]") {
    try {
        const engine::MemoryScope outer("building the replay");
        const engine::MemoryScope inner("reading trace.json");
        throw std::bad_alloc();
    } catch (const std::bad_alloc&) {
        REQUIRE(engine::memory_scope() == "reading trace.json");
    }
    {
        const engine::MemoryScope fresh("next run");  // a new outermost scope forgets the last failure
        REQUIRE(engine::memory_scope() == "next run");
    }
}
