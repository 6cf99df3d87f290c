// `clustersim analyze TRACES...`: analysis of PyTorch profiler (Kineto) traces without simulating them.
#include <cstdio>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "engine/atomic_file.h"
#include "engine/units.h"
#include "sim/scenario/scenario.h"
#include "tools/cli/commands.h"
#include "traces/analysis/analysis_writers.h"
#include "traces/formats/trace_import.h"
#include "traces/report/html_report.h"
#include "traces/summary_writers.h"

namespace clustersim::cli {

namespace {

struct AnalyzeOptions {
    std::vector<std::string> traces;
    int iteration = -1;
    std::string align = "auto";
    std::vector<std::string> comm_kernels;
    std::string kernel_wait = "30ns";
    std::string out_dir;
    bool report = false;
};

void run_analyze(const AnalyzeOptions& o) {
    traces::ImportOptions import;
    if (o.iteration >= 0) import.iteration = o.iteration;
    import.align = o.align;
    import.comm_kernels = o.comm_kernels;
    traces::analysis::AnalysisOptions options;
    options.kineto = traces::kineto_options(import);
    options.kernel_wait_threshold = engine::parse_time(o.kernel_wait, engine::SourceLocation{"--kernel-wait"});
    const std::string dir = o.out_dir.empty() ? "out/analysis" : o.out_dir;
    sim::prepare_output_dir(dir);
    const auto a = traces::analysis::analyze_kineto(o.traces, options);
    const std::string table = traces::analysis::analysis_table(a);
    std::fwrite(table.data(), 1, table.size(), stdout);
    const std::filesystem::path out(dir);
    engine::write_file_atomically(out / "analysis.json", traces::analysis::analysis_json(a));
    if (o.report) {
        traces::report::ReportOptions report;
        report.title = "clustersim analyze: " + a.summary.workload;
        const traces::OpGraph no_graph;
        engine::write_file_atomically(out / "report.html",
                                      traces::report::html_report(no_graph, {{"traced", &a.summary}}, report));
    }
    std::printf("\noutputs in %s/: analysis.json%s\n", dir.c_str(),
                o.report ? ", report.html (open in a browser)" : "");
}

}  // namespace

void add_analyze_command(CLI::App& app) {
    auto o = std::make_shared<AnalyzeOptions>();
    auto* cmd = app.add_subcommand(
        "analyze",
        "Analyse PyTorch profiler (Kineto) traces without simulating them, in Holistic Trace Analysis' terms: "
        "temporal\n"
        "breakdown, communication-computation overlap, idle time by cause, kernels, launch delays, queue length,\n"
        "stragglers at collectives, collectives by communicator (docs/formats.md \"analyze\").\n"
        "Example: clustersim analyze rank*.pt.trace.json.gz --report");
    cmd->add_option("traces", o->traces, "Kineto trace files, one per rank (gzip or not)")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option("--iteration", o->iteration, "ProfilerStep#N to analyse (default: the first)");
    cmd->add_option("--align", o->align, "Place ranks on one time axis by their shared clock, their step, or not")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "clock", "step", "none"}));
    cmd->add_option("--comm-kernel", o->comm_kernels,
                    "Name fragment of a communication kernel that is not NCCL's (repeatable)");
    cmd->add_option(
           "--kernel-wait", o->kernel_wait,
           "Gaps between kernels on a stream shorter than this are kernel wait (HTA's consecutive_kernel_delay)")
        ->capture_default_str();
    cmd->add_option("-o,--out", o->out_dir, "Output folder (default: out/analysis): analysis.json, report.html");
    cmd->add_flag("--report", o->report,
                  "Also write report.html: the traced partition per rank, in the simulation's terms");
    cmd->callback([o] { run_analyze(*o); });
}

}  // namespace clustersim::cli
