// Checks of an HTML report against the summary and timeline it was written from, shared by the report's tests and
// the examples' (each example's report is checked).
#pragma once

#include <string>

#include "traces/run_summary.h"
#include "traces/timeline.h"

namespace clustersim::testing {

/// The sections are there; one bar per rank group, each adding up to the iteration; one heatmap cell per non-empty
/// time bin of the links shown; nothing fetched from the network.
void check_report(const std::string& html, const traces::RunSummary& summary, const traces::Timeline& timeline);

/// Occurrences of `needle` in `text` between `from` and the next `until` after it (the whole text when `from` is
/// empty).
std::size_t count_in(const std::string& text, const std::string& needle, const std::string& from = "",
                     const std::string& until = "</svg>");

}  // namespace clustersim::testing
