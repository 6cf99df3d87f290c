// Scenarios: a YAML file naming a topology, a workload (generator or trace file) and system options; loading
// it, replaying it, and writing its outputs (Perfetto timeline, summary.json, ranks.csv, resolved.yaml).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/replay/replay.h"
#include "sim/scenario/jobs.h"
#include "sim/scenario/system_options.h"
#include "topologies/cluster.h"
#include "traces/op_graph.h"
#include "traces/report/html_report.h"
#include "traces/run_summary.h"
#include "traces/timeline_ranks.h"

namespace clustersim::sim {

struct OutputOptions {
    bool perfetto = true;
    std::size_t link_counters = 32;
    bool report = false;  // report.html (traces/report)
    /// timeline.json shows whole ranks up to this many ops, the critical path's first (traces/timeline_ranks.h);
    /// 0: every rank. About 180 bytes of JSON per op: the default, about 360 MB, opens in the Perfetto UI.
    std::uint64_t timeline_ops = 2'000'000;
};

/// What a plan that exceeds its GPUs' HBM does: fail before simulating (exit 3) or warn and run.
enum class MemoryCheck : std::uint8_t { error, warn };

struct Scenario {
    std::string name;
    std::string source;  // the file it came from
    topo::Cluster cluster;
    traces::OpGraph graph;
    std::string workload_description;
    ReplayOptions options;
    RunRepetition repetition;  // iterations already applied to `graph` (apply_iterations); samples at run time
    OutputOptions outputs;
    MemoryCheck memory_check = MemoryCheck::error;
    std::vector<traces::RankMemory> memory;  // peaks per rank (workloads with allocations)
    std::vector<JobSlice> jobs;              // several jobs on the cluster (`jobs:`), merged into `graph`
    std::string resolved_yaml;               // the scenario with overrides applied
};

/// Loads a scenario file and applies "key=value" overrides (--set) before decoding.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides);

/// Repeats the scenario's one-iteration graph repetition.iterations times (after its memory was computed: the
/// peaks are per iteration). Called by load_scenario; callers that build a Scenario in code call it themselves.
void apply_iterations(Scenario& scenario);

struct RunResult {
    traces::RunSummary summary;
    ReplayResult replay;
};

/// Replays a loaded scenario and computes its summary; with repetition.samples > 1, also the other seeded samples
/// (on up to `threads` threads; 0: the machine's cores) and their statistics.
RunResult run_scenario(const Scenario& scenario, unsigned threads = 0);

/// Creates `dir` if needed and checks that files can be written into it: called before simulating, so a bad
/// output folder fails at once (InputError naming the folder), not after the run.
void prepare_output_dir(const std::string& dir);

/// Writes the outputs into `dir` (created if needed), each file atomically: timeline.json (unless disabled),
/// summary.json, ranks.csv, resolved.yaml when the scenario has one, and report.html when asked.
/// Returns what the timeline shows (every rank unless the run has more ops than outputs.timeline_ops; none
/// written when outputs.perfetto is off).
traces::TimelineRanks write_outputs(const Scenario& scenario, const RunResult& result, const std::string& dir);
/// A line for the console when the timeline shows some ranks only, else empty.
std::string timeline_note(const Scenario& scenario, const traces::TimelineRanks& shown);

/// Writes report.html into `dir` atomically: the run, and beside it the runs given (a what-if, the traced timeline).
void write_report(const Scenario& scenario, const RunResult& result, const std::string& dir,
                  const std::vector<traces::report::ReportRun>& beside = {});

}  // namespace clustersim::sim
