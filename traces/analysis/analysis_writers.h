// The trace analysis as a terminal table and as analysis.json (docs/formats.md "analyze").
#pragma once

#include <string>

#include "traces/analysis/trace_analysis.h"

namespace clustersim::traces::analysis {

std::string analysis_table(const TraceAnalysis& a);
std::string analysis_json(const TraceAnalysis& a);

}  // namespace clustersim::traces::analysis
