#include "traces/report/sweep_report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "traces/report/categories.h"
#include "traces/report/svg.h"

namespace clustersim::traces::report {

bool smaller_is_better(const std::string& metric) {
    return metric.find("tflops") == std::string::npos && metric != "mfu" && metric != "tokens_per_second";
}

namespace {

std::optional<double> number(const std::string& s) {
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return v;
}

/// One small plot: `metric` of every ok row against the values of axis `k` (categories in order: numerically when
/// they all are numbers), each point's hover naming it; the mean per value joined by a line.
std::string small_multiple(const SweepTable& t, std::size_t k, std::size_t m, const std::string& id) {
    std::vector<std::string> xs;
    for (const auto& r : t.rows) {
        if (r.ok && std::find(xs.begin(), xs.end(), r.values[k]) == xs.end()) xs.push_back(r.values[k]);
    }
    if (std::all_of(xs.begin(), xs.end(), [](const std::string& x) { return number(x).has_value(); }))
        std::sort(xs.begin(), xs.end(), [](const auto& a, const auto& b) { return *number(a) < *number(b); });
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& r : t.rows) {
        if (!r.ok) continue;
        lo = std::min(lo, r.metrics[m]);
        hi = std::max(hi, r.metrics[m]);
    }
    if (!(hi >= lo)) return "";
    if (hi == lo) hi = lo + (lo == 0 ? 1 : std::abs(lo) * 0.1);
    const double w = 260, h = 170, left = 60, top = 24;
    auto px = [&](std::size_t i) { return left + (static_cast<double>(i) + 0.5) / static_cast<double>(xs.size()) * w; };
    auto py = [&](double v) { return top + h - (v - lo) / (hi - lo) * h; };
    std::string out = fmt::format(
        R"(<svg id="{}" class="plot small" xmlns="http://www.w3.org/2000/svg" width="{:.0f}" height="{:.0f}" role="img">)",
        escape(id), left + w + 10, top + h + 48);
    out += fmt::format(R"(<text x="{:.0f}" y="14" class="axis-label">{} against {}</text>)", left, escape(t.metrics[m]),
                       escape(t.keys[k]));
    out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#666"/>)", left, top, w, h);
    for (const double v : {lo, (lo + hi) / 2, hi})
        out += fmt::format(R"(<text x="{:.0f}" y="{:.1f}" class="tick" text-anchor="end">{}</text>)", left - 4,
                           py(v) + 4, short_number(v));
    std::string path;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        out += fmt::format(R"(<text x="{:.1f}" y="{:.0f}" class="tick" text-anchor="middle">{}</text>)", px(i),
                           top + h + 14, escape(xs[i]));
        double sum = 0;
        int n = 0;
        for (const auto& r : t.rows) {
            if (!r.ok || r.values[k] != xs[i]) continue;
            sum += r.metrics[m];
            ++n;
            std::string label;
            for (std::size_t j = 0; j < t.keys.size(); ++j)
                label += fmt::format("{}{}={}", j ? ", " : "", t.keys[j], r.values[j]);
            out += fmt::format(
                R"(<circle class="point" cx="{:.1f}" cy="{:.1f}" r="3" fill="{}" fill-opacity="0.6"><title>point {}: {} = {}</title></circle>)",
                px(i), py(r.metrics[m]), partition_categories[0].colour, r.index, escape(label),
                short_number(r.metrics[m]));
        }
        if (n) path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", px(i), py(sum / n));
    }
    out +=
        fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"/>)", path, partition_categories[2].colour);
    out += fmt::format(R"(<text x="{:.0f}" y="{:.0f}" class="axis-label" text-anchor="middle">{}</text>)", left + w / 2,
                       top + h + 34, escape(t.keys[k]));
    return out + "</svg>";
}

std::string best_table(const SweepTable& t) {
    std::string out = "<table id=\"best\"><tr><th>metric</th><th>best</th><th>point</th><th>its axes</th></tr>";
    for (std::size_t m = 0; m < t.metrics.size(); ++m) {
        const SweepTable::Row* best = nullptr;
        for (const auto& r : t.rows) {
            if (!r.ok) continue;
            const bool better = !best || (smaller_is_better(t.metrics[m]) ? r.metrics[m] < best->metrics[m]
                                                                          : r.metrics[m] > best->metrics[m]);
            if (better) best = &r;
        }
        if (!best) continue;
        std::string axes;
        for (std::size_t k = 0; k < t.keys.size(); ++k)
            axes += fmt::format("{}{}={}", k ? ", " : "", escape(t.keys[k]), escape(best->values[k]));
        out += fmt::format("<tr><td>{} ({})</td><td>{}</td><td>{}</td><td>{}</td></tr>", escape(t.metrics[m]),
                           smaller_is_better(t.metrics[m]) ? "lowest" : "highest", short_number(best->metrics[m]),
                           best->index, axes);
    }
    return out + "</table>";
}

/// Points not beaten on both iteration time and GPU count by another point.
std::string pareto(const SweepTable& t) {
    const auto it_m = std::find(t.metrics.begin(), t.metrics.end(), "iteration_us");
    const auto gpu_m = std::find(t.metrics.begin(), t.metrics.end(), "gpus");
    if (it_m == t.metrics.end() || gpu_m == t.metrics.end())
        return "<p class=\"note\">The Pareto front of iteration time against GPU count needs the metrics iteration_us "
               "and gpus.</p>";
    const auto mi = static_cast<std::size_t>(it_m - t.metrics.begin()),
               mg = static_cast<std::size_t>(gpu_m - t.metrics.begin());
    LineSeries front{"Pareto front", std::string(partition_categories[3].colour), {}, false};
    std::vector<std::pair<double, double>> ok;
    for (const auto& r : t.rows) {
        if (r.ok) ok.emplace_back(r.metrics[mg], r.metrics[mi] / 1e3);
    }
    std::sort(ok.begin(), ok.end());
    double best = INFINITY;
    for (const auto& [g, ms] : ok) {
        if (ms < best) {
            best = ms;
            front.points.emplace_back(g, ms);
        }
    }
    return log_log_plot({"pareto", "GPUs", "iteration (ms)", {front}});
}

}  // namespace

std::string sweep_report(const SweepTable& t) {
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
    out += fmt::format(
        "<title>{0}</title><style>body{{font-family:system-ui,sans-serif;margin:24px;color:#222}}h1{{font-size:20px}}"
        "table{{border-collapse:collapse;font-size:13px}}td,th{{padding:3px 10px;border-bottom:1px solid #eee;"
        "text-align:left}}.plot text{{font-size:10px}}.plot .axis-label{{font-size:11px}}.note{{color:#666;"
        "font-size:12px}}</style></head><body>\n<h1>{0}</h1>\n",
        escape(t.title));
    std::size_t ok = 0;
    for (const auto& r : t.rows) ok += r.ok;
    out += fmt::format("<p>{} points, {} ok.</p>\n", t.rows.size(), ok);
    out += "<section id=\"best-points\"><h2>The best point per metric</h2>" + best_table(t) + "</section>\n";
    out +=
        "<section id=\"metrics-by-axis\"><h2>Each metric against each axis</h2><p class=\"note\">Every point as a dot "
        "(hover for its axes), the mean over the other axes as a line.</p>";
    for (std::size_t m = 0; m < t.metrics.size(); ++m) {
        out += "<div>";
        for (std::size_t k = 0; k < t.keys.size(); ++k) out += small_multiple(t, k, m, fmt::format("m{}-a{}", m, k));
        out += "</div>";
    }
    out += "</section>\n<section id=\"pareto-front\"><h2>Iteration time against GPUs</h2>" + pareto(t) + "</section>\n";
    return out + "</body></html>\n";
}

}  // namespace clustersim::traces::report
