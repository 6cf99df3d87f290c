// `clustersim collective`: a simulated nccl-tests on a topology, or concurrent collectives to show contention.
#include <cstdio>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "engine/atomic_file.h"
#include "engine/units.h"
#include "sim/collective_sweep.h"
#include "sim/collectives/collective_algorithm.h"
#include "sim/scenario/scenario.h"
#include "tools/cli/commands.h"
#include "tools/cli/terminal_progress.h"
#include "topologies/topology_loader.h"
#include "traces/report/collective_report.h"

namespace clustersim::cli {

namespace {

struct CollectiveCliOptions {
    std::string topology = "dgx-h100";
    std::vector<std::string> overrides;
    std::string op = "all_reduce";
    std::string algo = "auto";
    std::string proto = "auto";
    std::string min = "8B";
    std::string max = "1GiB";
    double factor = 2;
    std::uint32_t channels = 8;
    std::uint32_t chunks = 0;
    std::string network = "max-min";
    bool all_flows = false;
    bool no_classes = false;
    bool concurrent = false;
    bool no_compare = false;
    bool no_fold = false;
    std::string out_dir;  // rows.csv, rows.json (and report.html) rewritten after each row
    bool report = false;
    unsigned threads = 0;  // 0: the machine's cores
};

struct RowContext {
    bool compare = false;
    std::string out_dir;
    bool report = false;
    traces::report::CollectiveRun run;
};

/// Prints one row of the table and flushes it, so that a sweep stopped early keeps its finished rows; with an
/// output folder, rewrites its files (atomically) with every row so far.
void print_row(void* context, const sim::CollectiveRow& r) {
    auto& ctx = *static_cast<RowContext*>(context);
    const bool compare = ctx.compare;
    std::printf("%14llu %14llu %8s %12.2f %12.2f %12.2f %-16s %-7s %14.2f", static_cast<unsigned long long>(r.bytes),
                static_cast<unsigned long long>(r.bytes / 4), "float", static_cast<double>(r.time.count()) / 1e6,
                r.algbw_gbps, r.busbw_gbps, r.algorithm.c_str(), r.protocol.c_str(), r.nccl_predicted_us);
    if (compare) {
        // The same pick as NCCL's: "=" (NCCL's model and the simulation agree on the best algorithm).
        const bool same = r.fastest_algorithm == r.algorithm && r.fastest_protocol == r.protocol;
        const std::string fastest = same ? "=" : r.fastest_algorithm + "/" + r.fastest_protocol;
        std::printf("  %-22s %12.2f", fastest.c_str(), static_cast<double>(r.fastest_time.count()) / 1e6);
    }
    std::printf("\n");
    std::fflush(stdout);
    if (ctx.out_dir.empty()) return;
    ctx.run.rows.push_back({r.bytes, r.bytes / 4, "float", static_cast<double>(r.time.count()) / 1e6, r.algbw_gbps,
                            r.busbw_gbps, r.algorithm, r.protocol, r.nccl_predicted_us});
    const std::filesystem::path dir(ctx.out_dir);
    engine::write_file_atomically(dir / "rows.csv", traces::report::collective_csv(ctx.run));
    engine::write_file_atomically(dir / "rows.json", traces::report::collective_json(ctx.run));
    if (ctx.report) engine::write_file_atomically(dir / "report.html", traces::report::collective_report(ctx.run));
}

void run_collective(const CollectiveCliOptions& o) {
    const topo::Cluster cluster = topo::load_topology(o.topology, o.overrides);
    sim::CollectiveSweepOptions options;
    options.kind = *traces::parse_collective_kind(o.op);
    options.min_bytes = engine::parse_bytes(o.min, engine::SourceLocation{"--min"});
    options.max_bytes = engine::parse_bytes(o.max, engine::SourceLocation{"--max"});
    options.factor = o.factor;
    options.threads = o.threads ? o.threads : std::max(1U, std::thread::hardware_concurrency());
    options.replay.channels = o.channels;
    options.replay.tree_chunks = o.chunks;
    options.replay.network.sharing =
        o.network == "contention-free" ? sim::SharingModel::contention_free : sim::SharingModel::max_min;
    options.replay.network.record_flows = false;
    options.replay.closed_form = !o.all_flows;
    options.replay.repeat_calls = !o.all_flows;
    options.replay.network.record_link_utilization = false;
    options.replay.link_counters = false;
    options.replay.network.flow_classes = !o.no_classes;
    options.replay.fold_by_symmetry =
        !o.no_fold;  // (a call alone, read for its time only; concurrent calls never fold)
    if (o.algo != "auto") options.replay.algorithm = sim::find_collective_algorithm(o.algo);
    if (o.proto == "none")
        options.replay.protocols = false;
    else if (o.proto != "auto")
        options.replay.protocol = sim::parse_nccl_protocol(o.proto);
    const std::string title = fmt::format("{} on {} ({} GPUs), {} network, {} channels", o.op, cluster.description,
                                          cluster.gpus().size(), o.network, o.channels);
    std::printf("# %s\n", title.c_str());
    if (o.concurrent) {
        std::printf(
            "# all-reduce inside every node (tp) and across nodes per local GPU index (dp), alone and together\n");
        std::printf("%14s %14s %14s %16s %16s %10s %10s\n", "size (B)", "tp alone (us)", "dp alone (us)",
                    "tp together (us)", "dp together (us)", "tp slower", "dp slower");
        const auto rows =
            with_progress("collective", options.replay, [&] { return sim::run_concurrent_sweep(cluster, options); });
        for (const auto& r : rows) {
            const auto us = [](engine::Time t) { return static_cast<double>(t.count()) / 1e6; };
            std::printf("%14llu %14.2f %14.2f %16.2f %16.2f %9.2fx %9.2fx\n", static_cast<unsigned long long>(r.bytes),
                        us(r.tp_alone), us(r.dp_alone), us(r.tp_together), us(r.dp_together),
                        us(r.tp_together) / us(r.tp_alone), us(r.dp_together) / us(r.dp_alone));
        }
        return;
    }
    options.compare_algorithms = !o.no_compare;
    const bool compare = options.compares();
    std::printf("%14s %14s %8s %12s %12s %12s %-16s %-7s %14s", "size (B)", "count", "type", "time (us)",
                "algbw (GB/s)", "busbw (GB/s)", "algorithm", "proto", "NCCL model (us)");
    if (compare) std::printf("  %-22s %12s", "fastest simulated", "its time (us)");
    std::printf("\n");
    std::fflush(stdout);
    RowContext context{compare, o.out_dir, o.report, {title, {}}};
    if (!o.out_dir.empty()) sim::prepare_output_dir(o.out_dir);  // a bad folder fails now, not after the first row
    with_progress("collective", options.replay, [&] {
        return sim::run_collective_sweep(cluster, options, sim::RowSink{&print_row, &context});
    });
    if (!o.out_dir.empty())
        std::printf("\noutputs in %s/: rows.csv, rows.json%s\n", o.out_dir.c_str(),
                    o.report ? ", report.html (open in a browser)" : "");
}

}  // namespace

void add_collective_command(CLI::App& app) {
    auto o = std::make_shared<CollectiveCliOptions>();
    auto* cmd = app.add_subcommand(
        "collective",
        "Simulated nccl-tests: one collective over every GPU of a topology, swept over sizes; or, with --concurrent,\n"
        "tensor-parallel all-reduces in every node racing data-parallel all-reduces across nodes.\n"
        "Example: clustersim collective --topology dgx-h100 --set nodes=2 --op all_reduce --min 8B --max 8GiB --factor "
        "4");
    cmd->add_option("--topology", o->topology, "Topology preset or YAML file")->capture_default_str();
    cmd->add_option("--set", o->overrides, "Override a topology parameter, key=value (repeatable)");
    cmd->add_option("--op", o->op, "Collective")
        ->capture_default_str()
        ->check(CLI::IsMember({"all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "all_to_all"}));
    std::vector<std::string> algorithms{"auto"};
    for (const auto& e : sim::collective_algorithms()) algorithms.push_back(e.name);
    cmd->add_option("--algo", o->algo,
                    "Algorithm: auto (NCCL's tuner) or one of " + sim::collective_algorithm_names() +
                        " (one without a form for the call falls back to the kind's default, then direct)")
        ->capture_default_str()
        ->check(CLI::IsMember(algorithms));
    cmd->add_option("--proto", o->proto, "Protocol: auto (NCCL's tuner), LL, LL128, Simple, or none (pure alpha-beta)")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "LL", "LL128", "Simple", "none"}));
    cmd->add_option("--min", o->min, "Smallest size, e.g. 8B")->capture_default_str();
    cmd->add_option("--max", o->max, "Largest size, e.g. 8GiB")->capture_default_str();
    cmd->add_option("--factor", o->factor, "Size multiplier between rows")
        ->capture_default_str()
        ->check(CLI::Range(1.0001, 1024.0));
    cmd->add_option("--channels", o->channels,
                    "NCCL channels: across switched nodes one ring or tree pair each, each on its own NIC; elsewhere "
                    "parallel flows per transfer")
        ->capture_default_str()
        ->check(CLI::Range(1, 64));
    cmd->add_option("--chunks", o->chunks,
                    "Pipelining chunks of trees, chains and NVLS: 0 chunks as NCCL does (one protocol step per "
                    "channel: Simple 512 KiB, LL128 576,000 B, LL 32 KiB; at most 256), N a fixed count")
        ->capture_default_str()
        ->check(CLI::Range(0, 1024));
    cmd->add_option("--network", o->network, "Network model")
        ->capture_default_str()
        ->check(CLI::IsMember({"max-min", "contention-free"}));
    cmd->add_flag(
        "--all-flows", o->all_flows,
        "Time every collective transfer as flows on the network, also those of calls that have their links to "
        "themselves (timed by formulas by default), and every call that repeats an earlier one alone on its links "
        "(timed from its record by default): the same results, faster; this is the reference");
    cmd->add_flag("--no-classes", o->no_classes, no_classes_help);
    cmd->add_flag("--no-compare", o->no_compare,
                  "With NCCL's choice: skip simulating NCCL's other algorithms (ring, double tree, NVLS) for the "
                  "'fastest simulated' columns (a third of the time)");
    cmd->add_flag("--no-fold", o->no_fold,
                  "Simulate every channel's ring whole. By default a ring call that is symmetric (its channels' "
                  "rings copies of one another, each node's GPUs and rails rotated; each ring the same under a "
                  "shift by a group of nodes, on identical leaf groups) is simulated as one group of one ring on "
                  "links standing for their orbits: the same time, a fraction of the flows (models.md, 'Calls "
                  "folded by symmetry'); this is the reference");
    cmd->add_flag("--concurrent", o->concurrent, "Tensor- and data-parallel all-reduces alone and together");
    cmd->add_option("-o,--out", o->out_dir,
                    "Output folder: rows.csv and rows.json (size, count, type, time, algbw, busbw, algorithm, "
                    "protocol, NCCL model), rewritten after each row");
    cmd->add_option(
        "-j,--threads", o->threads,
        "Sizes simulated at once, one per thread (default: the machine's cores); the rows are the same "
        "and come in size order whatever the count (the progress line shows only when one size runs at a time)");
    cmd->add_flag("--report", o->report,
                  "With -o: also report.html, bus bandwidth against size (simulated and NCCL's model) on log axes");
    cmd->callback([o] { run_collective(*o); });
}

}  // namespace clustersim::cli
