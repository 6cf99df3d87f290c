// libFuzzer target for one of clustersim's readers, chosen at build time (CLUSTERSIM_FUZZ_READER): the input is
// written to a file as a user would give it and read the way the CLI reads it. An input error (exit 3) is the
// expected outcome for a bad input; anything else that escapes (an internal error, another exception, a crash,
// a hang, running past the memory limit) is a finding.
#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>

#include "engine/error.h"
#include "engine/memory_budget.h"
#include "sim/scenario/scenario.h"
#include "sim/sweep/sweep_spec.h"
#include "topologies/topology_loader.h"
#include "traces/formats/trace_import.h"
#include "traces/summary_reader.h"

namespace {

using namespace clustersim;

/// The reader under test, by name.
constexpr const char* reader = CLUSTERSIM_FUZZ_READER;

std::string input_path() {
    const std::string r = reader;
    const std::string ext = r == "chakra"                                      ? ".et"
                            : r == "kineto" || r == "native" || r == "summary" ? ".json"
                            : r == "simai"                                     ? ".txt"
                                                                               : ".yaml";
    return "/tmp/clustersim-fuzz-" + std::string(reader) + "-" + std::to_string(::getpid()) + ext;
}

void read_as_user(const std::string& path) {
    const std::string name = reader;
    if (name == "topology") {
        (void)topo::load_topology(path, {});
    } else if (name == "scenario") {
        (void)sim::load_scenario(path, {});
    } else if (name == "sweep") {
        // The sweep file and its grid, as `clustersim sweep` reads them before running any point.
        const sim::SweepSpec spec = sim::load_sweep(path);
        (void)sim::sweep_points(spec);
    } else if (name == "summary") {
        (void)traces::read_summary_json(path);  // what `clustersim compare` reads
    } else {
        traces::ImportOptions options;
        options.format = name;
        if (name == "simai") options.world_size = 16;
        (void)traces::import_traces({path}, options);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string path = input_path();
    // The budget the readers check their plans against: well under libFuzzer's 2 GB (tools/fuzz) with ASan's
    // overhead, and the same on every machine (the default follows the machine's memory, so an input too large
    // for the fuzzer but within a big machine's budget would be a finding on one machine and not another).
    static const bool budget_set = (engine::set_memory_budget(std::uint64_t{512} << 20), true);
    (void)budget_set;
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    try {
        read_as_user(path);
    } catch (const engine::InputError&) {
        // Expected for a bad input: a located message, exit 3.
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz %s: escaped: %s\n", reader, e.what());
        std::abort();
    }
    return 0;
}
