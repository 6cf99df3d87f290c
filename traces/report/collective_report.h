// The outputs of `clustersim collective -o DIR`: its rows as CSV and JSON, and report.html with bus bandwidth
// against size (simulated and NCCL's model) on log axes and the table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim::traces::report {

struct CollectivePoint {
    std::uint64_t bytes = 0;  // nccl-tests "size"
    std::uint64_t count = 0;  // elements
    std::string type;         // element type
    double time_us = 0;
    double algbw_gbps = 0;
    double busbw_gbps = 0;
    std::string algorithm;
    std::string protocol;
    double nccl_model_us = 0;  // NCCL's predicted time, 0 when none
};

/// What the sweep was: the title line (collective, topology, network, channels).
struct CollectiveRun {
    std::string title;
    std::vector<CollectivePoint> rows;
};

std::string collective_csv(const CollectiveRun& run);
std::string collective_json(const CollectiveRun& run);
std::string collective_report(const CollectiveRun& run);

}  // namespace clustersim::traces::report
