// `clustersim compare A B`: two runs' outputs side by side (output folders or their summary.json files).
#include <cstdio>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "engine/atomic_file.h"
#include "sim/scenario/scenario.h"
#include "tools/cli/commands.h"
#include "traces/report/html_report.h"
#include "traces/summary_compare.h"
#include "traces/summary_reader.h"

namespace clustersim::cli {

namespace {

struct CompareOptions {
    std::string a, b;
    bool report = false;
    std::string out_dir;
};

void run_compare(const CompareOptions& o) {
    const traces::RunSummary a = traces::read_summary_json(o.a), b = traces::read_summary_json(o.b);
    const std::string table = traces::compare_table(a, b, o.a, o.b);
    std::fwrite(table.data(), 1, table.size(), stdout);
    if (!o.report) return;
    const std::string dir = o.out_dir.empty() ? "out/compare" : o.out_dir;
    sim::prepare_output_dir(dir);
    traces::report::ReportOptions options;
    options.title = "clustersim: " + o.a + " against " + o.b;
    const traces::OpGraph no_graph;  // the summaries name what the report shows
    engine::write_file_atomically(
        std::filesystem::path(dir) / "report.html",
        traces::report::html_report(no_graph, {{"A: " + o.a, &a}, {"B: " + o.b, &b}}, options));
    std::printf("\nreport in %s/report.html (open in a browser)\n", dir.c_str());
}

}  // namespace

void add_compare_command(CLI::App& app) {
    auto o = std::make_shared<CompareOptions>();
    auto* cmd = app.add_subcommand(
        "compare",
        "Two runs side by side: iteration, each category of the partition (mean and largest over ranks), the "
        "critical path,\ncommunication by group and the links whose utilization changed most.\n"
        "Example: clustersim compare out/base out/what-if --report -o out/compare");
    cmd->add_option("a", o->a, "Output folder (or its summary.json) of run A")->required()->check(CLI::ExistingPath);
    cmd->add_option("b", o->b, "Output folder (or its summary.json) of run B")->required()->check(CLI::ExistingPath);
    cmd->add_flag("--report", o->report, "Also write report.html with both runs (in -o, default out/compare)");
    cmd->add_option("-o,--out", o->out_dir, "Folder of report.html (default: out/compare)");
    cmd->callback([o] { run_compare(*o); });
}

}  // namespace clustersim::cli
