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

/// Merges shard folders of one sweep into `out_dir`: rows by index (an ok row wins over a failed one); returns the
/// indices of the grid's filtered points that no folder has.
std::vector<std::uint64_t> merge_sweeps(const std::vector<std::string>& dirs, const std::string& out_dir);

}  // namespace clustersim::sim
