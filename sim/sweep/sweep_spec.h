// A sweep file (SWEEP.yaml): a base scenario, axes of values for its keys (a grid: every combination), groups of
// axes that vary together (zip), an optional filter and the metrics to report. Expanded into points in a fixed
// order (the first axis varies slowest), each a list of (key, value) overrides of the base. docs/formats.md
// "Sweeps".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/sweep/filter_expression.h"

namespace clustersim::sim {

/// One dimension of the grid: a single axis, or a zip group whose axes take their i-th values together.
struct SweepDimension {
    std::vector<std::string> keys;
    std::vector<std::vector<std::string>> values;  // [i][k]: the i-th setting of keys[k]
};

/// The metrics a sweep can report per point.
const std::vector<std::string>& sweep_metric_names();

struct SweepSpec {
    std::string file;  // the sweep file
    std::string base;  // the base scenario, as a path (relative ones resolved against the sweep file's folder)
    std::vector<SweepDimension> dimensions;
    std::optional<FilterExpression> filter;
    std::vector<std::string> metrics;
    std::uint64_t hash = 0;  // of the sweep file's and the base scenario's text: a resumed folder must match

    /// Every axis key, in dimension order.
    [[nodiscard]] std::vector<std::string> keys() const;
};

using SweepPoint = std::vector<std::pair<std::string, std::string>>;  // (key, value) overrides, in key order

/// Reads and checks a sweep file: unknown keys, empty or non-scalar values, zip groups of unequal lengths, unknown
/// metrics and a filter that does not parse are located errors.
SweepSpec load_sweep(const std::string& path);

/// Loads the base with each axis value alone (`load_with` gets "key=value") and turns a complaint about the value
/// itself (an unknown key, a value of the wrong type) into a located error of the sweep file, before any point runs.
void check_sweep_values(const SweepSpec& spec, const std::function<void(const std::string&)>& load_with);

/// The grid's points that pass the filter, with their index in the whole grid (stable across filters and shards).
std::vector<std::pair<std::uint64_t, SweepPoint>> sweep_points(const SweepSpec& spec);

}  // namespace clustersim::sim
