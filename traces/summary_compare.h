// Two runs side by side (`clustersim compare A B`): the iteration and every category of the partition (mean and
// largest over ranks), the critical path, communication by group and the links whose utilization changed most,
// each with the change from A to B.
#pragma once

#include <string>

#include "traces/run_summary.h"

namespace clustersim::traces {

std::string compare_table(const RunSummary& a, const RunSummary& b, const std::string& label_a,
                          const std::string& label_b);

}  // namespace clustersim::traces
