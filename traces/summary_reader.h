// Reading a run's summary.json back (for `clustersim compare`): the inverse of summary_json, every field checked.
#pragma once

#include <string>

#include "traces/run_summary.h"

namespace clustersim::traces {

/// The summary in `path`: a summary.json, or an output folder holding one. Throws InputError naming the file and
/// the key when it is not a clustersim summary.
RunSummary read_summary_json(const std::string& path);

}  // namespace clustersim::traces
