// The report of a sweep (`clustersim sweep --report`): the best point per metric, each metric against each axis as
// small multiples, and the Pareto front of iteration time against GPU count when the sweep reports both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim::traces::report {

struct SweepTable {
    std::string title;
    std::vector<std::string> keys;     // axes
    std::vector<std::string> metrics;  // reported metrics
    struct Row {
        std::uint64_t index = 0;
        std::vector<std::string> values;  // by key
        bool ok = false;
        std::vector<double> metrics;  // by metric
    };
    std::vector<Row> rows;  // by index
};

/// Whether smaller is better for a metric (times, fractions, memory) or larger (throughputs).
bool smaller_is_better(const std::string& metric);

std::string sweep_report(const SweepTable& table);

}  // namespace clustersim::traces::report
