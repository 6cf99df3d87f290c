// The run summary as JSON (summary.json), CSV (one row per rank) and a text table for the terminal.
#pragma once

#include <string>

#include "traces/op_graph.h"
#include "traces/run_summary.h"

namespace clustersim::traces {

std::string summary_json(const RunSummary& summary, const OpGraph& graph);
std::string ranks_csv(const RunSummary& summary);
std::string summary_table(const RunSummary& summary, const OpGraph& graph);

}  // namespace clustersim::traces
