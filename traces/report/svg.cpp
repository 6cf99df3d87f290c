#include "traces/report/svg.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace clustersim::traces::report {

std::string escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string short_number(double value) {
    if (value == 0) return "0";
    const double magnitude = std::abs(value);
    if (magnitude >= 1e9 || magnitude < 1e-3) return fmt::format("{:.3e}", value);
    if (magnitude >= 1e4) return fmt::format("{:.0f}", value);
    return fmt::format("{:.4g}", value);
}

std::pair<double, std::string> time_axis_unit(double largest) {
    if (largest >= 1e12) return {1e12, "s"};
    if (largest >= 1e10) return {1e9, "ms"};
    return {1e6, "us"};
}

namespace {

constexpr double label_width = 170, plot_width = 640, bar_height = 18, bar_gap = 4;

/// Ticks from 0 to at least `top` at a round step (1, 2 or 5 x 10^k), about five of them.
std::vector<double> ticks(double top) {
    if (!(top > 0)) return {0};
    const double raw = top / 5;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    double step = power;
    for (const double m : {1.0, 2.0, 5.0, 10.0}) {
        step = m * power;
        if (step >= raw) break;
    }
    std::vector<double> out;
    for (double t = 0; t <= top * (1 + 1e-9); t += step) out.push_back(t);
    return out;
}

std::string legend(const std::vector<Series>& series, double y) {
    std::string out;
    double x = label_width;
    for (const Series& s : series) {
        out += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="12" height="12" fill="{}"/>)", x, y, s.colour);
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="legend">{}</text>)", x + 16, y + 10, escape(s.name));
        x += 22 + 7.0 * static_cast<double>(s.name.size());
    }
    return out;
}

}  // namespace

std::string stacked_bars(const StackedBarChart& chart) {
    double top = 0;
    for (const Bar& b : chart.bars) {
        double sum = 0;
        for (const double v : b.values) sum += v / chart.scale;
        top = std::max(top, sum);
    }
    const std::vector<double> marks = ticks(top);
    const double axis_max = std::max(marks.back(), top) > 0 ? std::max(marks.back(), top) : 1;
    const double plot_height = static_cast<double>(chart.bars.size()) * (bar_height + bar_gap);
    const double height = plot_height + 80;
    std::string out = fmt::format(
        R"(<svg id="{}" class="plot" xmlns="http://www.w3.org/2000/svg" width="{:.0f}" height="{:.0f}" role="img">)",
        escape(chart.id), label_width + plot_width + 20, height);
    for (std::size_t i = 0; i < chart.bars.size(); ++i) {
        const Bar& b = chart.bars[i];
        const double y = 10 + static_cast<double>(i) * (bar_height + bar_gap);
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="label" text-anchor="end">{}</text>)", label_width - 6,
                           y + bar_height - 5, escape(b.label));
        double x = label_width, sum = 0;
        for (const double v : b.values) sum += v / chart.scale;
        out += fmt::format(R"(<g class="bar" data-total="{}">)", short_number(sum));
        for (std::size_t k = 0; k < b.values.size() && k < chart.series.size(); ++k) {
            const double v = b.values[k] / chart.scale;
            if (v <= 0) continue;
            const double w = v / axis_max * plot_width;
            out += fmt::format(
                R"(<rect class="segment" x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{:.0f}" fill="{}" data-value="{}">)"
                R"(<title>{}: {} {} ({:.1f}%){}</title></rect>)",
                x, y, w, bar_height, chart.series[k].colour, short_number(v), escape(chart.series[k].name),
                short_number(v), escape(chart.unit), sum > 0 ? 100 * v / sum : 0.0,
                b.note.empty() ? "" : "; " + escape(b.note));
            x += w;
        }
        out += "</g>";
    }
    // Value axis with ticks and its label.
    const double axis_y = 10 + plot_height + 4;
    out += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" class="axis"/>)", label_width,
                       axis_y, label_width + plot_width);
    for (const double t : marks) {
        const double x = label_width + t / axis_max * plot_width;
        out += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" class="axis"/>)", x, axis_y,
                           axis_y + 4);
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="tick" text-anchor="middle">{}</text>)", x, axis_y + 16,
                           short_number(t));
    }
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="axis-label" text-anchor="middle">{}</text>)",
                       label_width + plot_width / 2, axis_y + 32, escape(chart.value_axis));
    out += legend(chart.series, axis_y + 44);
    out += "</svg>";
    return out;
}

std::string log_log_plot(const LinePlot& plot) {
    double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY, y_hi = 0;
    for (const LineSeries& s : plot.series) {
        for (const auto& [x, y] : s.points) {
            if (!(x > 0 && y > 0)) continue;
            x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x), y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
        }
    }
    if (!(x_hi > 0)) x_lo = 1, x_hi = 10, y_lo = 1, y_hi = 10;
    // Whole decades around the data.
    const double dx0 = std::floor(std::log10(x_lo)), dx1 = std::max(dx0 + 1, std::ceil(std::log10(x_hi)));
    const double dy0 = std::floor(std::log10(y_lo)), dy1 = std::max(dy0 + 1, std::ceil(std::log10(y_hi)));
    const double left = 70, top = 10, width = plot_width, height = 320;
    auto px = [&](double x) { return left + (std::log10(x) - dx0) / (dx1 - dx0) * width; };
    auto py = [&](double y) { return top + height - (std::log10(y) - dy0) / (dy1 - dy0) * height; };
    std::string out = fmt::format(
        R"(<svg id="{}" class="plot" xmlns="http://www.w3.org/2000/svg" width="{:.0f}" height="{:.0f}" role="img">)",
        escape(plot.id), left + width + 30, top + height + 80);
    out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" class="axis" stroke="#666"/>)", left,
                       top, width, height);
    for (double d = dx0; d <= dx1; ++d) {
        const double x = px(std::pow(10.0, d));
        out +=
            fmt::format(R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#eee"/>)", x, top, top + height);
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="tick" text-anchor="middle">1e{}</text>)", x,
                           top + height + 14, static_cast<int>(d));
    }
    for (double d = dy0; d <= dy1; ++d) {
        const double y = py(std::pow(10.0, d));
        out +=
            fmt::format(R"(<line x1="{1}" y1="{0:.1f}" x2="{2}" y2="{0:.1f}" stroke="#eee"/>)", y, left, left + width);
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="tick" text-anchor="end">{}</text>)", left - 4, y + 4,
                           short_number(std::pow(10.0, d)));
    }
    std::vector<Series> legend_series;
    for (const LineSeries& s : plot.series) {
        std::string path;
        for (const auto& [x, y] : s.points) {
            if (!(x > 0 && y > 0)) continue;
            path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", px(x), py(y));
        }
        out += fmt::format(R"(<path class="line" d="{}" fill="none" stroke="{}" stroke-width="2"{}/>)", path, s.colour,
                           s.dashed ? R"( stroke-dasharray="6,4")" : "");
        for (const auto& [x, y] : s.points) {
            if (!(x > 0 && y > 0)) continue;
            out += fmt::format(
                R"(<circle class="point" cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"><title>{}: {} at {}</title></circle>)",
                px(x), py(y), s.colour, escape(s.name), short_number(y), short_number(x));
        }
        legend_series.push_back({s.name, s.colour});
    }
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="axis-label" text-anchor="middle">{}</text>)",
                       left + width / 2, top + height + 32, escape(plot.x_axis));
    out += fmt::format(
        R"svg(<text x="14" y="{0:.1f}" class="axis-label" text-anchor="middle" transform="rotate(-90 14 {0:.1f})">{1}</text>)svg",
        top + height / 2, escape(plot.y_axis));
    out += legend(legend_series, top + height + 44);
    out += "</svg>";
    return out;
}

std::string heatmap(const Heatmap& map) {
    std::size_t columns = 0;
    for (const auto& row : map.cells) columns = std::max(columns, row.size());
    const double cell_w = columns ? std::max(1.0, plot_width / static_cast<double>(columns)) : plot_width;
    const double cell_h = 14;
    const double plot_height = static_cast<double>(map.rows.size()) * cell_h;
    const double width = label_width + cell_w * static_cast<double>(columns) + 20;
    std::string out = fmt::format(
        R"(<svg id="{}" class="plot" xmlns="http://www.w3.org/2000/svg" width="{:.0f}" height="{:.0f}" role="img">)",
        escape(map.id), std::max(width, label_width + plot_width + 20), plot_height + 90);
    auto colour = [](double v) {
        // White (0) to dark red (1), through orange; the square root spreads the low utilizations apart.
        const double t = std::sqrt(std::clamp(v, 0.0, 1.0));
        const int r = static_cast<int>(255 - 75 * t), g = static_cast<int>(255 - 235 * t),
                  b = static_cast<int>(255 - 225 * t);
        return fmt::format("rgb({},{},{})", r, g, b);
    };
    for (std::size_t i = 0; i < map.rows.size(); ++i) {
        const double y = 10 + static_cast<double>(i) * cell_h;
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="label" text-anchor="end">{}</text>)", label_width - 6,
                           y + cell_h - 3, escape(map.rows[i]));
        const auto& row = map.cells[i];
        for (std::size_t k = 0; k < row.size(); ++k) {
            if (std::isnan(row[k]) || row[k] <= 0) continue;  // idle: the background shows white
            const double from = map.x_start + static_cast<double>(k) * map.x_step;
            out += fmt::format(
                R"(<rect class="cell" x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{:.0f}" fill="{}" data-value="{}">)"
                R"(<title>{}, {} to {}: {} {:.1f}%</title></rect>)",
                label_width + static_cast<double>(k) * cell_w, y, cell_w, cell_h - 1, colour(row[k]),
                short_number(row[k]), escape(map.rows[i]), short_number(from), short_number(from + map.x_step),
                escape(map.value_name), 100 * row[k]);
        }
    }
    const double axis_y = 10 + plot_height + 4;
    const double span = map.x_step * static_cast<double>(columns);
    for (const auto& [at, label] : map.markers) {
        if (span <= 0 || at < map.x_start || at > map.x_start + span) continue;
        const double x = label_width + (at - map.x_start) / span * cell_w * static_cast<double>(columns);
        out += fmt::format(
            R"(<line class="marker" x1="{:.2f}" y1="6" x2="{:.2f}" y2="{:.1f}" stroke="#1f4e9c" stroke-width="1.5" )"
            R"(stroke-dasharray="4 3"><title>{} at {}</title></line>)",
            x, x, axis_y, escape(label), short_number(at));
    }
    const std::vector<double> marks = ticks(span);
    for (const double t : marks) {
        if (t > span) break;
        const double x = label_width + (span > 0 ? t / span : 0) * cell_w * static_cast<double>(columns);
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="tick" text-anchor="middle">{}</text>)", x, axis_y + 12,
                           short_number(map.x_start + t));
    }
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="axis-label" text-anchor="middle">{}</text>)",
                       label_width + plot_width / 2, axis_y + 28, escape(map.x_axis));
    // Colour scale: 0% to 100%.
    for (int k = 0; k <= 10; ++k)
        out += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="20" height="10" fill="{}"/>)", label_width + 20.0 * k,
                           axis_y + 40, colour(k * k / 100.0));
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" class="legend">0% to 100% {} (square-root scale)</text>)",
                       label_width + 230, axis_y + 49, escape(map.value_name));
    out += "</svg>";
    return out;
}

}  // namespace clustersim::traces::report
