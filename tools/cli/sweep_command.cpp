// `clustersim sweep SWEEP.yaml`: a grid of what-if points of one scenario, on all cores, resumable; `--shard I/N`
// for job arrays and `clustersim sweep merge` to join their folders.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "engine/error.h"
#include "sim/scenario/scenario.h"
#include "sim/sweep/sweep_runner.h"
#include "tools/cli/commands.h"
#include "tools/cli/sweep_mpi.h"

namespace clustersim::cli {

namespace {

struct SweepCliOptions {
    std::string file;
    unsigned threads = 0;
    std::string out_dir;
    bool retry_failed = false;
    std::string shard;
    bool mpi = false;
    bool report = false;
    std::vector<std::string> merge_dirs;
    std::string merge_out;
};

/// The progress line on a terminal: points done and failed, the rate since the start and the time left at it.
struct Progress {
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    std::size_t first_done = SIZE_MAX;  // points finished before this run
};
void progress_line(void* context, std::size_t done, std::size_t failed, std::size_t total) {
    auto& p = *static_cast<Progress*>(context);
    if (p.first_done == SIZE_MAX) p.first_done = done;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - p.start).count();
    const double rate = elapsed > 0 ? static_cast<double>(done - p.first_done) / elapsed : 0;
    const std::string eta = rate > 0 ? fmt::format("{:.0f} s left", static_cast<double>(total - done) / rate) : "";
    std::fprintf(stderr, "\rsweep: %zu of %zu points done, %zu failed, %.1f points/s %s   ", done, total, failed, rate,
                 eta.c_str());
    if (done == total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
}

void run(const SweepCliOptions& o) {
    const sim::SweepSpec spec = sim::load_sweep(o.file);
    sim::SweepOptions options;
    options.out_dir = o.out_dir.empty() ? "out/sweep-" + std::filesystem::path(o.file).stem().string() : o.out_dir;
    options.threads = o.threads ? o.threads : std::max(1U, std::thread::hardware_concurrency());
    options.retry_failed = o.retry_failed;
    options.report = o.report;
    if (!o.shard.empty()) {
        unsigned i = 0, n = 0;
        char slash = 0;
        if (std::sscanf(o.shard.c_str(), "%u%c%u", &i, &slash, &n) != 3 || slash != '/' || n == 0 || i >= n)
            throw engine::InputError(engine::SourceLocation{"--shard"},
                                     fmt::format("expected I/N with 0 <= I < N, got \"{}\"", o.shard));
        options.shard = i;
        options.shards = n;
    }
    Progress progress;
    sim::prepare_output_dir(options.out_dir);  // a folder that cannot be written fails now, as an input error
    if (::isatty(STDERR_FILENO)) {
        options.progress = &progress_line;
        options.progress_context = &progress;
    }
    if (o.mpi && !o.threads) options.threads = 1;  // under mpirun each rank runs one point at a time unless -j
    const std::optional<sim::SweepOutcome> outcome =
        o.mpi ? run_sweep_mpi(spec, options) : std::optional<sim::SweepOutcome>(sim::run_sweep(spec, options));
    if (!outcome) return;  // an MPI worker: rank 0 reports
    const sim::SweepOutcome& r = *outcome;
    std::printf("sweep %s: %zu points (%zu run now, %zu finished before), %zu failed; results in %s/results.csv\n",
                o.file.c_str(), r.points, r.ran, r.skipped, r.failed, options.out_dir.c_str());
    if (r.failed > 0) throw PartialFailure{};
}

void merge(const SweepCliOptions& o) {
    sim::prepare_output_dir(o.merge_out);
    const auto missing = sim::merge_sweeps(o.merge_dirs, o.merge_out);
    std::printf("merged %zu folders into %s/results.csv; %zu points missing\n", o.merge_dirs.size(),
                o.merge_out.c_str(), missing.size());
    for (std::size_t i = 0; i < missing.size() && i < 20; ++i)
        std::printf("  missing point %llu\n", static_cast<unsigned long long>(missing[i]));
    if (!missing.empty()) throw PartialFailure{};
}

}  // namespace

void add_sweep_command(CLI::App& app) {
    auto o = std::make_shared<SweepCliOptions>();
    auto* cmd = app.add_subcommand(
        "sweep",
        "Run a grid of what-if points of a scenario (SWEEP.yaml: base, axes, zip, filter, metrics; docs/formats.md\n"
        "\"Sweeps\") on all cores into one folder: each point's summary, results.csv and results.jsonl. Rerunning\n"
        "skips finished points. Exit code 1 when some point failed.\n"
        "Example: clustersim sweep docs/examples/09-sweep/sweep.yaml -j 2");
    cmd->add_option("sweep", o->file, "Sweep file")->check(CLI::ExistingFile);
    cmd->add_option("-j,--threads", o->threads, "Points run at once (default: the machine's cores)");
    cmd->add_option("-o,--out", o->out_dir, "Output folder (default: out/sweep-<file name>)");
    cmd->add_flag("--retry-failed", o->retry_failed, "Rerun the points that failed in an earlier run");
    cmd->add_flag("--mpi", o->mpi,
                  "Under mpirun: rank 0 hands out points and writes the folder, the other ranks run them (-j threads "
                  "each, default 1); the same outputs as a local run");
    cmd->add_flag("--report", o->report,
                  "Also write report.html: the best point per metric, each metric against each axis, and the Pareto "
                  "front of iteration time against GPUs");
    cmd->add_option("--shard", o->shard, "I/N: run only the points whose index is I modulo N (job arrays)");
    auto* merge_cmd = cmd->add_subcommand("merge",
                                          "Merge the folders of a sweep's shards into one result set.\n"
                                          "Example: clustersim sweep merge out/shard-* -o out/sweep");
    merge_cmd->add_option("dirs", o->merge_dirs, "Shard folders")->required()->check(CLI::ExistingDirectory);
    merge_cmd->add_option("-o,--out", o->merge_out, "Merged folder")->required();
    merge_cmd->callback([o] { merge(*o); });
    cmd->callback([o, merge_cmd] {
        if (merge_cmd->parsed()) return;
        if (o->file.empty()) throw CLI::RequiredError("sweep");
        run(*o);
    });
}

}  // namespace clustersim::cli
