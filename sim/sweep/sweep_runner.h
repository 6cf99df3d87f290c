// Running a sweep's points on threads into one folder, resumably: each finished point writes its summary and its row
// atomically under points/<index>/; a rerun skips finished points (and failed ones unless asked to retry); a
// folder of another sweep is refused. Rows are gathered into results.csv (byte-identical for the same points,
// whatever the threads or shards) and results.jsonl (with each point's wall time). Shards split the points by
// index for job arrays; merge joins shard folders.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/sweep/sweep_spec.h"

namespace clustersim::sim {

struct SweepRow {
    std::uint64_t index = 0;
    SweepPoint point;
    std::string status;  // ok, invalid (the point's plan or input is refused), failed (anything else)
    std::string error;
    std::vector<std::pair<std::string, double>> metrics;
    double wall_s = 0;
};

struct SweepOptions {
    std::string out_dir;
    unsigned threads = 1;
    bool retry_failed = false;
    bool report = false;                  // also report.html (traces/report/sweep_report)
    std::uint32_t shard = 0, shards = 1;  // run the points whose index % shards == shard
    /// Called from the calling thread as points finish (done, failed, of total), for a progress line.
    void (*progress)(void* context, std::size_t done, std::size_t failed, std::size_t total) = nullptr;
    void* progress_context = nullptr;
};

struct SweepOutcome {
    std::size_t points = 0;   // of this shard, after the filter
    std::size_t ran = 0;      // run now
    std::size_t skipped = 0;  // finished by an earlier run
    std::size_t failed = 0;   // not ok (invalid or failed), of all points of the shard
};

/// Runs the sweep into options.out_dir (created; refused when it holds another sweep).
SweepOutcome run_sweep(const SweepSpec& spec, const SweepOptions& options);

// The steps of run_sweep, for drivers that run points elsewhere (MPI: tools/cli/sweep_mpi.cpp).

/// A point's row and its summary.json text ("" when it did not run to the end).
struct PointResult {
    SweepRow row;
    std::string summary_json;
};
/// Runs one point (no files written).
PointResult compute_point(const SweepSpec& spec, std::uint64_t index, const SweepPoint& point);
/// Writes a point's summary and row into the folder, atomically.
void store_point(const std::string& out_dir, const PointResult& result);
/// A row as one JSON line, and back (`where` names it in errors).
std::string sweep_row_json(const SweepRow& row);
SweepRow parse_sweep_row(const std::string& text, const std::string& where);

/// Checks the values and the folder (refused when it holds another sweep), writes sweep.json, and returns the points
/// of the shard still to run; `done` receives the rows finished before (kept, not rerun).
std::vector<std::pair<std::uint64_t, SweepPoint>> prepare_sweep(const SweepSpec& spec, const SweepOptions& options,
                                                                std::vector<SweepRow>& done);
/// Writes results.csv and results.jsonl from every row of the shard (and report.html when asked).
void finish_sweep(const SweepSpec& spec, const SweepOptions& options, const std::vector<SweepRow>& rows);

/// Merges shard folders of one sweep into `out_dir`: rows by index (an ok row wins over a failed one); returns the
/// indices of the grid's filtered points that no folder has.
std::vector<std::uint64_t> merge_sweeps(const std::vector<std::string>& dirs, const std::string& out_dir);

}  // namespace clustersim::sim
