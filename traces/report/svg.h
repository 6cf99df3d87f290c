// Plots as inline SVG text for the HTML report: horizontal stacked bars and a heatmap, with axis labels, a legend
// and hover titles (the SVG <title> element: shown by every browser, no script). Pure text, no dependencies.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace clustersim::traces::report {

/// Text escaped for HTML and SVG (&, <, >, ").
std::string escape(std::string_view text);

/// One stacked bar: its label and a value per series (same order as the chart's series).
struct Bar {
    std::string label;
    std::vector<double> values;
    std::string note;  // appended to every segment's hover text (e.g. "ranks 0-7")
};

struct Series {
    std::string name;
    std::string colour;  // CSS colour
};

struct StackedBarChart {
    std::string id;              // element id (tests find plots by it)
    std::string value_axis;      // label of the value axis, with its unit
    std::vector<Series> series;  // stacking order, left to right
    std::vector<Bar> bars;       // top to bottom
    double scale = 1;            // values are divided by this for display (e.g. 1e6 for ps -> us)
    std::string unit;            // of displayed values, in hover text
};
/// Horizontal bars, each the sum of its segments; an axis from 0 to the largest bar, a legend below.
std::string stacked_bars(const StackedBarChart& chart);

struct Heatmap {
    std::string id;
    std::string x_axis;                      // e.g. "time (us)"
    double x_start = 0, x_step = 1;          // column k covers [x_start + k x_step, x_start + (k + 1) x_step)
    std::vector<std::string> rows;           // row labels, top to bottom
    std::vector<std::vector<double>> cells;  // [row][column], values in [0, 1] (a fraction), NaN for none
    std::string value_name;                  // e.g. "utilization"
    std::vector<std::pair<double, std::string>> markers;  // vertical lines at x (in the axis's unit), with a label
};
/// A cell per (row, column) with a positive value, white to dark red by value (idle cells are left white), with a
/// colour scale; hover shows the row, the column's range and the value. Markers are dashed vertical lines across
/// the rows, their label on hover.
std::string heatmap(const Heatmap& map);

struct LineSeries {
    std::string name;
    std::string colour;
    std::vector<std::pair<double, double>> points;  // (x, y), x increasing; points with x or y <= 0 are left out
    bool dashed = false;
};
struct LinePlot {
    std::string id;
    std::string x_axis, y_axis;  // labels with units
    std::vector<LineSeries> series;
};
/// Lines with a marker per point on logarithmic x and y axes (decade ticks), a legend below; hover shows values.
std::string log_log_plot(const LinePlot& plot);

/// The unit a time axis reads best in for values up to `largest` picoseconds: (picoseconds per unit, its name):
/// us below 10 ms, ms below 1 s, s above.
std::pair<double, std::string> time_axis_unit(double largest);

/// A number for display: up to 4 significant digits, no exponent for ordinary magnitudes.
std::string short_number(double value);

}  // namespace clustersim::traces::report
