// `clustersim run SCENARIO`: load a scenario, replay it, print the summary table, write the outputs.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "engine/log.h"
#include "engine/time.h"
#include "sim/scenario/scenario.h"
#include "tools/cli/commands.h"
#include "tools/cli/terminal_progress.h"
#include "tools/cli/variation_options.h"
#include "traces/summary_writers.h"

#include <spdlog/spdlog.h>

namespace clustersim::cli {

namespace {
struct RunOptions {
    std::string scenario;
    std::vector<std::string> overrides;
    std::string out_dir;
    bool report = false;
    bool no_classes = false;
    VariationCliOptions variation;
};

void run(const RunOptions& o) {
    auto& log = engine::layer_log("cli");
    std::vector<std::string> overrides = o.overrides;
    for (const std::string& assignment : o.variation.overrides()) overrides.push_back(assignment);
    sim::Scenario scenario = sim::load_scenario(o.scenario, overrides);
    if (o.report) scenario.outputs.report = true;
    if (o.no_classes) scenario.options.network.flow_classes = false;
    log.info("scenario '{}': {} ranks, {} ops on {}", scenario.name, scenario.graph.rank_count,
             scenario.graph.ops.size(), scenario.cluster.description);
    const std::string dir = o.out_dir.empty() ? "out/" + scenario.name : o.out_dir;
    sim::prepare_output_dir(dir);  // a bad folder fails now, not after the run
    const sim::RunResult result = with_progress("run", scenario.options, [&] { return sim::run_scenario(scenario); });
    const traces::TimelineRanks shown = sim::write_outputs(scenario, result, dir);
    const std::string table = traces::summary_table(result.summary, scenario.graph);
    std::fwrite(table.data(), 1, table.size(), stdout);
    std::printf("\noutputs in %s/: %ssummary.json, ranks.csv, resolved.yaml%s\n", dir.c_str(),
                scenario.outputs.perfetto ? "timeline.json (open in ui.perfetto.dev), " : "",
                scenario.outputs.report ? ", report.html (open in a browser)" : "");
    if (const std::string note = sim::timeline_note(scenario, shown); !note.empty()) std::printf("%s\n", note.c_str());
}
}  // namespace

void add_run_command(CLI::App& app) {
    auto options = std::make_shared<RunOptions>();
    auto* cmd = app.add_subcommand(
        "run",
        "Replay a scenario (topology + workload + system options) and report where the time goes.\n"
        "Example: clustersim run docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml --set workload.microbatches=16");
    cmd->add_option("scenario", options->scenario, "Scenario YAML file (see docs/formats.md)")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option("--set", options->overrides,
                    "Override a scenario value before decoding, key.path=value (repeatable)");
    cmd->add_option("-o,--out", options->out_dir, "Output folder (default: out/<scenario name>)");
    cmd->add_flag("--report", options->report,
                  "Also write report.html: a self-contained page with plots (as outputs.report: true)");
    cmd->add_flag("--no-classes", options->no_classes, no_classes_help);
    add_variation_options(*cmd, options->variation, false);
    cmd->callback([options] { run(*options); });
}

}  // namespace clustersim::cli
