// `clustersim replay TRACE --topology T`: replay a native trace on a topology without writing a scenario.
#include <cstdio>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "sim/scenario.h"
#include "tools/cli/commands.h"
#include "topologies/topology_loader.h"
#include "traces/native_trace.h"
#include "traces/summary_writers.h"

namespace clustersim::cli {

namespace {
struct ReplayCliOptions {
    std::string trace;
    std::string topology;
    std::vector<std::string> overrides;
    std::string network = "max-min";
    std::string algorithm;
    std::string out_dir;
};

void run_replay(const ReplayCliOptions& o) {
    sim::Scenario s;
    s.name = std::filesystem::path(o.trace).stem().string();
    s.source = o.trace;
    s.cluster = topo::load_topology(o.topology, o.overrides);
    s.graph = traces::read_native_trace(o.trace);
    s.workload_description = "trace " + o.trace;
    s.options.network.sharing =
        o.network == "contention-free" ? sim::SharingModel::contention_free : sim::SharingModel::max_min;
    if (!o.algorithm.empty()) s.options.algorithm = sim::find_collective_algorithm(o.algorithm);
    const sim::RunResult result = sim::run_scenario(s);
    const std::string dir = o.out_dir.empty() ? "out/" + s.name : o.out_dir;
    sim::write_outputs(s, result, dir);
    const std::string table = traces::summary_table(result.summary, s.graph);
    std::fwrite(table.data(), 1, table.size(), stdout);
    std::printf("\noutputs in %s/: timeline.json (open in ui.perfetto.dev), summary.json, ranks.csv\n", dir.c_str());
}
}  // namespace

void add_replay_command(CLI::App& app) {
    auto options = std::make_shared<ReplayCliOptions>();
    auto* cmd =
        app.add_subcommand("replay",
                           "Replay a trace (clustersim native JSON) on a topology.\n"
                           "Example: clustersim replay trace.json --topology dgx-h100 --set nodes=2 -o out/run1");
    cmd->add_option("trace", options->trace, "Trace file (native JSON, see docs/formats.md)")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option("--topology", options->topology, "Topology preset name or YAML file")->required();
    cmd->add_option("--set", options->overrides, "Override a topology parameter, key=value (repeatable)");
    cmd->add_option("--network", options->network, "Network model")
        ->capture_default_str()
        ->check(CLI::IsMember({"max-min", "contention-free"}));
    cmd->add_option("--collective-algo", options->algorithm, "Force a collective algorithm")
        ->check(CLI::IsMember({"direct", "double_tree", "halving_doubling", "hierarchical", "ring"}));
    cmd->add_option("-o,--out", options->out_dir, "Output folder (default: out/<trace name>)");
    cmd->callback([options] { run_replay(*options); });
}

}  // namespace clustersim::cli
