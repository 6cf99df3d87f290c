// The collective calls of a replay by communicator family, kind, algorithm and protocol: calls, size, time waiting
// for members and transferring, achieved bus bandwidth and NCCL's predicted time (the report's table).
#pragma once

#include <vector>

#include "sim/replay/replay.h"
#include "traces/op_graph.h"
#include "traces/run_summary.h"

namespace clustersim::sim {

std::vector<traces::CollectiveCalls> collective_calls(const traces::OpGraph& g,
                                                      const std::vector<CollectiveRecord>& records);

}  // namespace clustersim::sim
