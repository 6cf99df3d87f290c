// `clustersim replay TRACE --topology T`: replay a native trace on a topology without writing a scenario.
#include <cstdio>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "engine/error.h"
#include "engine/phase_timer.h"
#include "engine/time.h"
#include "sim/analysis.h"
#include "sim/collectives/collective_algorithm.h"
#include "sim/retarget.h"
#include "sim/scenario/scenario.h"
#include "tools/cli/commands.h"
#include "tools/cli/import_options.h"
#include "tools/cli/terminal_progress.h"
#include "tools/cli/variation_options.h"
#include "topologies/topology_loader.h"
#include "traces/analysis/trace_analysis.h"
#include "traces/formats/trace_import.h"
#include "traces/summary_writers.h"

namespace clustersim::cli {

namespace {
struct ReplayCliOptions {
    std::vector<std::string> traces;
    ImportCliOptions import;
    std::string fold_model = "cost-model";
    std::string collective_model = "flows";
    std::string gpu;       // what-if: retarget measured kernel times to this GPU
    std::string from_gpu;  // the traced GPU when the trace does not say
    std::string topology;
    bool report = false;
    std::uint64_t timeline_ops = sim::OutputOptions{}.timeline_ops;
    std::vector<std::string> overrides;
    std::vector<std::string> what_if_overrides;  // what-if: topology parameters changed against the faithful run
    std::string network = "max-min";
    bool all_flows = false;
    bool no_classes = false;
    std::string algorithm;  // what-if
    std::string algo = "auto";
    std::string protocol = "auto";
    std::uint32_t channels = 8;
    std::uint32_t chunks = 0;
    std::string out_dir;
    VariationCliOptions variation;
};

// The busiest rank's figure for one field of the breakdown.
engine::Time busiest(const traces::RunSummary& summary, engine::Time traces::RankBreakdown::*field) {
    engine::Time most{0};
    for (const auto& r : summary.ranks) most = std::max(most, r.*field);
    return most;
}

// The catalogue entries of --from-gpu (or the trace's GPU) and --gpu, checked before any run: --gpu first, then
// where the kernels were measured.
std::pair<std::size_t, std::size_t> what_if_gpus(const ReplayCliOptions& o, const traces::OpGraph& graph) {
    const auto& catalogue = topo::GpuCatalogue::builtin();
    const auto to = catalogue.find(o.gpu);
    if (!to)
        throw engine::InputError(engine::SourceLocation{"--gpu"},
                                 fmt::format("unknown GPU '{}' (known: {})", o.gpu, catalogue.names()));
    const std::string from_name = o.from_gpu.empty() ? graph.traced_gpu : o.from_gpu;
    const auto from = catalogue.find(from_name);
    if (!from && o.from_gpu.empty())
        throw engine::InputError(
            engine::SourceLocation{graph.source},
            fmt::format("--gpu {}: the trace {}: give --from-gpu (known: {})", o.gpu,
                        graph.traced_gpu.empty()
                            ? std::string("does not name the GPU it was recorded on")
                            : fmt::format("was recorded on '{}', which is not in the catalogue", graph.traced_gpu),
                        catalogue.names()));
    if (!from)
        throw engine::InputError(engine::SourceLocation{"--from-gpu"},
                                 fmt::format("unknown GPU '{}' (known: {})", o.from_gpu, catalogue.names()));
    return {*from, *to};
}

// What-if: the same job with kernels retargeted to another GPU (--gpu), a forced collective algorithm
// (--collective-algo) and topology changes (--what-if-set), side by side with the faithful replay. Its outputs go
// to DIR/what-if/.
/// Runs the what-if, writes its outputs into DIR/what-if and prints it beside the faithful run; returns it with its
/// label.
std::pair<sim::RunResult, std::string> run_what_if(const ReplayCliOptions& o, const sim::Scenario& faithful,
                                                   topo::Cluster cluster, const sim::RunResult& faithful_result,
                                                   const std::string& dir) {
    sim::Scenario s;
    s.name = faithful.name + " (what-if)";
    s.source = faithful.source;
    s.graph = faithful.graph;
    s.workload_description = faithful.workload_description;
    s.options = faithful.options;
    s.outputs = faithful.outputs;
    std::vector<std::string> changes;
    if (!o.gpu.empty()) {
        const auto& catalogue = topo::GpuCatalogue::builtin();
        const auto [from, to] = what_if_gpus(o, s.graph);
        sim::retarget(s.graph, catalogue.gpus()[from], catalogue.gpus()[to]);
        changes.push_back(fmt::format("kernels measured on {} rescaled to {} by kernel class",
                                      catalogue.gpus()[from].name, catalogue.gpus()[to].name));
    }
    if (!o.algorithm.empty()) {
        s.options.algorithm = sim::find_collective_algorithm(o.algorithm);
        changes.push_back("collectives forced to " + o.algorithm);
    }
    s.cluster = std::move(cluster);
    if (!o.what_if_overrides.empty())
        changes.push_back(fmt::format("topology {} with {}", s.cluster.description,
                                      fmt::format("{}", fmt::join(o.what_if_overrides, ", "))));
    const sim::RunResult result = with_progress("replay", s.options, [&] { return sim::run_scenario(s); });
    sim::write_outputs(s, result, dir + "/what-if");
    std::string label = fmt::format("what-if: {}", fmt::join(changes, "; "));
    std::printf("\nwhat-if: %s\n", fmt::format("{}", fmt::join(changes, "; ")).c_str());
    std::printf("  %-10s %14s %14s\n", "", "faithful", "what-if");
    const auto row = [](const char* name, engine::Time a, engine::Time b, const char* note) {
        std::printf("  %-10s %14s %14s   %s\n", name, engine::format_time(a).c_str(), engine::format_time(b).c_str(),
                    note);
    };
    row("iteration", faithful_result.summary.makespan, result.summary.makespan, "");
    row("compute", busiest(faithful_result.summary, &traces::RankBreakdown::compute),
        busiest(result.summary, &traces::RankBreakdown::compute), "(busiest rank)");
    row("exposed", busiest(faithful_result.summary, &traces::RankBreakdown::exposed_communication),
        busiest(result.summary, &traces::RankBreakdown::exposed_communication), "(busiest rank)");
    row("peer wait", busiest(faithful_result.summary, &traces::RankBreakdown::peer_wait),
        busiest(result.summary, &traces::RankBreakdown::peer_wait), "(busiest rank)");
    std::printf("  what-if outputs in %s/what-if/\n", dir.c_str());
    return {result, std::move(label)};
}

void run_replay(const ReplayCliOptions& o) {
    sim::Scenario s;
    const std::string& first = o.traces.front();
    s.name = std::filesystem::path(first).stem().string();
    while (!std::filesystem::path(s.name).extension().empty()) s.name = std::filesystem::path(s.name).stem().string();
    s.source = first;
    s.cluster = topo::load_topology(o.topology, o.overrides);
    const bool what_if = !o.gpu.empty() || !o.algorithm.empty() || !o.what_if_overrides.empty();
    std::optional<topo::Cluster> what_if_cluster;  // the faithful one, changed by --what-if-set (checked up front)
    if (what_if) {
        std::vector<std::string> overrides = o.overrides;
        overrides.insert(overrides.end(), o.what_if_overrides.begin(), o.what_if_overrides.end());
        try {
            what_if_cluster.emplace(topo::load_topology(o.topology, overrides));
        } catch (const engine::InputError& e) {
            throw engine::InputError(fmt::format("--what-if-set: {}", e.what()));
        }
    }
    const traces::ImportOptions import = o.import.import_options();
    {
        const engine::PhaseTimer timer("cli", "trace import and checks");
        s.graph = traces::import_traces(o.traces, import);
    }
    if (!s.graph.job_ranks.empty())
        std::printf(
            "symmetry reduction: simulating %u of the job's %u ranks; collectives reaching the others are "
            "timed %s (docs/models.md)\n\n",
            s.graph.rank_count, s.graph.job_size(),
            o.fold_model == "flows" ? "by simulating each call alone on its whole group" : "by the cost model");
    const std::string format = import.format == "auto" ? traces::detect_trace_format(first) : import.format;
    s.workload_description = fmt::format("{} trace {}{}", format, first,
                                         o.traces.size() > 1 ? fmt::format(" (+{} files)", o.traces.size() - 1) : "");
    s.options.network.sharing =
        o.network == "contention-free" ? sim::SharingModel::contention_free : sim::SharingModel::max_min;
    s.options.closed_form = !o.all_flows;
    s.options.repeat_calls = !o.all_flows;
    s.options.network.flow_classes = !o.no_classes;
    s.options.collective_model = o.collective_model == "cost-model" ? sim::ReplayOptions::CollectiveModel::cost_model
                                                                    : sim::ReplayOptions::CollectiveModel::flows;
    s.options.fold_model =
        o.fold_model == "flows" ? sim::ReplayOptions::FoldModel::flows : sim::ReplayOptions::FoldModel::cost_model;
    if (o.algo != "auto") s.options.algorithm = sim::find_collective_algorithm(o.algo);
    if (o.protocol == "none")
        s.options.protocols = false;
    else if (o.protocol != "auto")
        s.options.protocol = sim::parse_nccl_protocol(o.protocol);
    s.options.channels = o.channels;
    s.options.tree_chunks = o.chunks;
    o.variation.apply(s);
    const std::string dir = o.out_dir.empty() ? "out/" + s.name : o.out_dir;
    s.outputs.report = o.report;
    s.outputs.timeline_ops = o.timeline_ops;
    sim::prepare_output_dir(dir);                        // a bad folder fails now, not after the run
    if (!o.gpu.empty()) (void)what_if_gpus(o, s.graph);  // and so does an unknown --gpu
    const sim::RunResult result = with_progress("replay", s.options, [&] { return sim::run_scenario(s); });
    const traces::TimelineRanks shown = sim::write_outputs(s, result, dir);
    const std::string table = traces::summary_table(result.summary, s.graph);
    std::fwrite(table.data(), 1, table.size(), stdout);
    const auto comparison = sim::compare_collectives(s.graph, result.replay.timeline);
    if (!comparison.empty()) {
        std::printf(
            "\ncollectives (all ranks)   calls   traced kernels   simulated in call = waiting for peers + transfer\n");
        for (const auto& c : comparison) {
            std::printf("  %-22s %6zu   %14s   %17s   %17s   %12s\n", traces::collective_kind_name(c.kind), c.calls,
                        engine::format_time(c.traced).c_str(),
                        engine::format_time(c.simulated_wait + c.simulated_transfer).c_str(),
                        engine::format_time(c.simulated_wait).c_str(),
                        engine::format_time(c.simulated_transfer).c_str());
        }
    }
    std::optional<std::pair<sim::RunResult, std::string>> what_if_run;
    if (what_if) what_if_run = run_what_if(o, s, std::move(*what_if_cluster), result, dir);
    if (o.report) {
        // The report: the simulated run, the traced timeline beside it (Kineto traces, analysed as traced), and the
        // what-if.
        std::vector<traces::report::ReportRun> beside;
        std::optional<traces::analysis::TraceAnalysis> traced;
        if (format == "kineto") {
            traces::analysis::AnalysisOptions analysis;
            analysis.kineto = traces::kineto_options(import);
            traced = traces::analysis::analyze_kineto(o.traces, analysis);
            beside.push_back({"traced", &traced->summary, nullptr});
        }
        if (what_if_run)
            beside.push_back({what_if_run->second, &what_if_run->first.summary, &what_if_run->first.replay.timeline});
        sim::write_report(s, result, dir, beside);
    }
    if (s.graph.traced_iteration.count() >= 0) {
        // Several iterations: against their mean.
        const engine::Time mean = traces::mean_iteration(result.summary);
        const double traced = engine::to_seconds(s.graph.traced_iteration), replayed = engine::to_seconds(mean);
        std::printf("\ntraced iteration %s, replayed %s%s (%+.1f%%)\n",
                    engine::format_time(s.graph.traced_iteration).c_str(), engine::format_time(mean).c_str(),
                    s.graph.iteration_count() > 1 ? " (mean)" : "", 100 * (replayed - traced) / traced);
    }
    std::printf("\noutputs in %s/: timeline.json (open in ui.perfetto.dev), summary.json, ranks.csv%s\n", dir.c_str(),
                o.report ? ", report.html (open in a browser)" : "");
    if (const std::string note = sim::timeline_note(s, shown); !note.empty()) std::printf("%s\n", note.c_str());
}
}  // namespace

void add_replay_command(CLI::App& app) {
    auto options = std::make_shared<ReplayCliOptions>();
    auto* cmd = app.add_subcommand(
        "replay",
        "Replay traces on a topology: native JSON, PyTorch profiler (Kineto) JSON per rank, Chakra .et per rank,\n"
        "or a SimAI / ASTRA-sim text workload (docs/formats.md).\n"
        "Example: clustersim replay worker*.pt.trace.json.gz --topology dgx1-v100 -o out/dlrm");
    cmd->add_option(
           "traces", options->traces,
           "Trace files: one native or text-workload file, or one Kineto / Chakra file per rank in rank order (.gz ok)")
        ->required()
        ->check(CLI::ExistingFile);
    add_import_options(*cmd, options->import);
    cmd->add_option("--collective-model", options->collective_model,
                    "How collectives are timed: flows (simulated on the network: contention, skew, algorithm steps) "
                    "or cost-model (NCCL's formulas per call once all members arrived: fast, no contention)")
        ->capture_default_str()
        ->check(CLI::IsMember({"flows", "cost-model"}));
    cmd->add_option(
           "--fold-model", options->fold_model,
           "How collectives of folded groups are timed: cost-model (NCCL's formulas, fast) or flows (each call "
           "shape simulated alone on the whole group, exact on an idle network, slower)")
        ->capture_default_str()
        ->check(CLI::IsMember({"cost-model", "flows"}));
    cmd->add_option("--gpu", options->gpu,
                    "What-if: also replay with kernel times retargeted to this GPU (e.g. H100); what-if options "
                    "combine into one what-if run, printed beside the faithful one");
    cmd->add_option("--from-gpu", options->from_gpu,
                    "The GPU the trace was recorded on, when the trace does not name it");
    cmd->add_option("--topology", options->topology, "Topology preset name or YAML file")->required();
    cmd->add_option("--set", options->overrides, "Override a topology parameter, key=value (repeatable)");
    cmd->add_option("--network", options->network, "Network model")
        ->capture_default_str()
        ->check(CLI::IsMember({"max-min", "contention-free"}));
    cmd->add_flag(
        "--all-flows", options->all_flows,
        "Time every collective transfer as flows on the network, also those of calls that have their links to "
        "themselves (timed by formulas by default), and every call that repeats an earlier one alone on its links "
        "(timed from its record by default): the same results, faster; this is the reference");
    cmd->add_flag("--no-classes", options->no_classes, no_classes_help);
    cmd->add_option("--what-if-set", options->what_if_overrides,
                    "What-if: also replay with this topology parameter changed, key=value (repeatable), e.g. "
                    "nic_bandwidth=\"200 Gb/s\"")
        ->type_name("KEY=VALUE");
    std::vector<std::string> algorithms{"auto"};
    for (const auto& e : sim::collective_algorithms()) algorithms.push_back(e.name);
    cmd->add_option("--collective-algo", options->algorithm,
                    "What-if: also replay with every collective forced to this algorithm")
        ->check(CLI::IsMember(std::vector<std::string>(algorithms.begin() + 1, algorithms.end())));
    cmd->add_option("--algo", options->algo,
                    "Collective algorithm for every call: auto (NCCL's tuner, or the trace's hint) or one of " +
                        sim::collective_algorithm_names())
        ->capture_default_str()
        ->check(CLI::IsMember(algorithms));
    cmd->add_option("--protocol", options->protocol,
                    "NCCL protocol: auto (NCCL's tuner), LL, LL128, Simple, or none (pure alpha-beta transfers)")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "LL", "LL128", "Simple", "none"}));
    cmd->add_option("--channels", options->channels, "NCCL channels (as `collective --channels`)")
        ->capture_default_str()
        ->check(CLI::Range(1, 64));
    cmd->add_option("--chunks", options->chunks,
                    "Pipelining chunks of trees, chains and NVLS: 0 as NCCL does, N a fixed count")
        ->capture_default_str()
        ->check(CLI::Range(0, 1024));
    add_variation_options(*cmd, options->variation, true);
    cmd->add_option("-o,--out", options->out_dir, "Output folder (default: out/<trace name>)");
    cmd->add_option("--timeline-ops", options->timeline_ops,
                    "timeline.json shows whole ranks up to this many ops, the critical path's ranks first (0: every "
                    "rank; a larger timeline does not open in the Perfetto UI)")
        ->capture_default_str();
    cmd->add_flag("--report", options->report,
                  "Also write report.html: a self-contained page with plots (with a what-if, both runs side by side)");
    cmd->callback([options] { run_replay(*options); });
}

}  // namespace clustersim::cli
