#include "traces/report/html_report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/units.h"
#include "traces/report/categories.h"
#include "traces/report/svg.h"

namespace clustersim::traces::report {

using engine::Time;

namespace {

std::string css() {
    return R"(body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:right}
td:first-child,th:first-child{text-align:left}.plot text{font-size:11px}.plot .axis{stroke:#666}
.plot .axis-label{font-size:12px}.plot .legend{font-size:11px}.note{color:#666;font-size:12px}
table.run td{text-align:left}
)";
}

std::string rank_label(const std::vector<std::uint32_t>& ranks) {
    if (ranks.size() == 1) return fmt::format("rank {}", ranks.front());
    if (ranks.back() - ranks.front() + 1 == ranks.size())
        return fmt::format("ranks {}-{}", ranks.front(), ranks.back());
    if (ranks.size() <= 4) return fmt::format("ranks {}", fmt::join(ranks, ", "));
    return fmt::format("rank {} +{}", ranks.front(), ranks.size() - 1);
}

std::string ranks_note(const std::vector<std::uint32_t>& ranks) {
    std::string out = fmt::format("{} rank{}:", ranks.size(), ranks.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < ranks.size() && i < 16; ++i) out += fmt::format(" {}", ranks[i]);
    if (ranks.size() > 16) out += " ...";
    return out;
}

std::string row(std::initializer_list<std::string> cells, const char* tag = "td") {
    std::string out = "<tr>";
    for (const std::string& c : cells) out += fmt::format("<{0}>{1}</{0}>", tag, c);
    return out + "</tr>";
}

std::string run_section(const RunSummary& s, const std::string& label) {
    std::string out = "<table class=\"run\">";
    out += row({"run", escape(label)});
    out += row({"scenario", escape(s.scenario)});
    out += row({"topology", escape(s.topology)});
    out += row({"workload", escape(s.workload)});
    out += row({s.iteration_ends.empty() ? "iteration" : "run", engine::format_time(s.makespan)});
    if (!s.iteration_ends.empty())
        out += row({"iterations",
                    fmt::format("{}, mean {}", s.iteration_ends.size(), engine::format_time(mean_iteration(s)))});
    if (s.samples.samples > 0)
        out += row({"iteration over samples",
                    fmt::format("{} samples: p50 {}, p90 {}, p99 {}, max {}", s.samples.samples,
                                engine::format_time(s.samples.p50), engine::format_time(s.samples.p90),
                                engine::format_time(s.samples.p99), engine::format_time(s.samples.max))});
    for (const TimelineMarker& m : s.cluster_events)
        out += row({"event at " + engine::format_time(m.at), escape(m.label)});
    if (s.ops > 0 || s.events > 0) {  // a simulated run (a traced timeline has neither)
        out += row({"ops, events, flows", fmt::format("{}, {}, {}", s.ops, s.events, s.flows)});
        out += row({"bytes on the network", engine::format_bytes(static_cast<double>(s.bytes_on_network))});
    }
    const TrainingMetrics& t = s.training;
    if (t.model_flops_per_iteration > 0) {
        out += row({"model TFLOP/s per GPU", fmt::format("{:.1f}", t.tflops_per_gpu)});
        out += row({"MFU", fmt::format("{:.1f}%", 100 * t.mfu)});
        if (t.tokens_per_second > 0) out += row({"tokens/s", fmt::format("{:.0f}", t.tokens_per_second)});
    }
    if (!s.memory.empty()) {
        const auto top = std::max_element(s.memory.begin(), s.memory.end(),
                                          [](const auto& a, const auto& b) { return a.peak_bytes < b.peak_bytes; });
        out += row({"peak memory", fmt::format("{} of {} (rank {})", engine::format_bytes(top->peak_bytes),
                                               engine::format_bytes(top->hbm_bytes), top->rank)});
    }
    return out + "</table>";
}

std::vector<Series> partition_series() {
    std::vector<Series> series;
    for (const Category& c : partition_categories) series.push_back({std::string(c.name), std::string(c.colour)});
    return series;
}

std::string ranks_section(const RunSummary& s, const ReportOptions& options, const std::string& id) {
    const std::vector<RankGroup> groups = rank_groups(s, options.max_rank_groups);
    const auto [scale, unit] = time_axis_unit(static_cast<double>(s.makespan.count()));
    StackedBarChart chart{id, "time in the iteration (" + unit + ")", partition_series(), {}, scale, unit};
    std::size_t shown = 0;
    for (const RankGroup& g : groups) {
        Bar bar{rank_label(g.ranks), {}, ranks_note(g.ranks)};
        for (const Time t : partition(*g.breakdown)) bar.values.push_back(static_cast<double>(t.count()));
        chart.bars.push_back(std::move(bar));
        shown += g.ranks.size();
    }
    std::string out = stacked_bars(chart);
    out += fmt::format(
        "<p class=\"note\">{} bars for {} ranks (ranks with identical breakdowns share a bar){}.</p>", groups.size(),
        s.ranks.size(),
        shown < s.ranks.size() ? fmt::format("; {} ranks in other groups not shown", s.ranks.size() - shown) : "");
    return out;
}

std::string critical_path_section(const OpGraph& g, const RunSummary& s) {
    const CriticalPath& cp = s.critical_path;
    const auto& c = partition_categories;
    const auto [scale, unit] = time_axis_unit(static_cast<double>(s.makespan.count()));
    StackedBarChart chart{"critical-path-bar",
                          "time on the critical path (" + unit + ")",
                          {{"compute", std::string(c[0].colour)},
                           {"communication", std::string(c[2].colour)},
                           {"copies", std::string(copies_colour)},
                           {"waiting", std::string(c[4].colour)}},
                          {Bar{"critical path",
                               {static_cast<double>(cp.compute.count()), static_cast<double>(cp.communication.count()),
                                static_cast<double>(cp.copies.count()), static_cast<double>(cp.waiting.count())},
                               fmt::format("{} ops", cp.steps.size())}},
                          scale,
                          unit};
    std::string out = stacked_bars(chart);
    std::vector<const CriticalStep*> longest;
    for (const CriticalStep& step : cp.steps) longest.push_back(&step);
    std::stable_sort(longest.begin(), longest.end(),
                     [](const auto* a, const auto* b) { return a->end - a->start > b->end - b->start; });
    if (longest.size() > 10) longest.resize(10);
    if (!longest.empty()) {
        out += "<table id=\"critical-path-ops\">" + row({"longest ops on the path", "rank", "start", "duration"}, "th");
        for (const CriticalStep* step : longest) {
            if (!step->op.valid() || step->op.index() >= g.ops.size()) continue;
            out += row({escape(g.name(step->op)), fmt::format("{}", g.job_rank(g.rank_of(g.ops[step->op.index()]))),
                        engine::format_time(step->start), engine::format_time(step->end - step->start)});
        }
        out += "</table>";
    }
    return out;
}

std::string links_section(const RunSummary& s, const Timeline* tl, const ReportOptions& options) {
    std::string out;
    if (tl && !tl->counters.empty()) {
        const std::vector<std::size_t> order = busiest_counters(tl->counters, options.heatmap_links);
        const auto [scale, unit] = time_axis_unit(static_cast<double>(s.makespan.count()));
        Heatmap map{"link-heatmap", "time (" + unit + ")", 0, 0, {}, {}, "utilization"};
        map.x_step = static_cast<double>(tl->counters[order.front()].bin_width.count()) / scale;
        std::size_t columns = 0;
        for (const std::size_t c : order) columns = std::max(columns, tl->counters[c].bins.size());
        for (const std::size_t c : order) {
            const CounterSeries& series = tl->counters[c];
            map.rows.push_back(series.name);
            const double seconds = engine::to_seconds(series.bin_width);
            std::vector<double> cells(columns, 0.0);
            for (std::size_t k = 0; k < series.bins.size(); ++k)
                cells[k] = series.capacity > 0 && seconds > 0 ? series.bins[k] / (series.capacity * seconds) : 0;
            map.cells.push_back(std::move(cells));
        }
        for (const TimelineMarker& m : s.cluster_events)
            map.markers.emplace_back(static_cast<double>(m.at.count()) / scale, m.label);
        out += heatmap(map);
        out += fmt::format(
            "<p class=\"note\">The {} links that carried the most bytes; each cell the link's average utilization over "
            "a time bin of {} {}.{}</p>",
            order.size(), short_number(map.x_step), unit,
            s.cluster_events.empty() ? "" : " Dashed lines: the cluster's events (system.events), named on hover.");
    }
    if (!s.top_links.empty()) {
        out += "<table id=\"top-links\">" +
               row({"most contended links", "contention delay", "bytes", "mean util.", "peak util."}, "th");
        for (const LinkReport& l : s.top_links)
            out += row({escape(l.name), engine::format_time(engine::from_seconds(l.contention_delay_s)),
                        engine::format_bytes(l.bytes), fmt::format("{:.1f}%", 100 * l.mean_utilization),
                        fmt::format("{:.1f}%", 100 * l.peak_utilization)});
        out += "</table>";
    }
    return out;
}

std::string communication_section(const RunSummary& s) {
    if (s.communication.empty()) return "<p class=\"note\">No communication.</p>";
    const auto ranks = static_cast<double>(std::max<std::size_t>(1, s.ranks.size()));
    std::string out =
        "<table id=\"communication\">" +
        row({"group", "ops per rank", "bytes per rank", "waiting per rank", "transferring per rank"}, "th");
    for (const GroupCommunication& c : s.communication)
        out +=
            row({escape(c.group), fmt::format("{:.1f}", static_cast<double>(c.ops) / ranks),
                 engine::format_bytes(static_cast<double>(c.bytes) / ranks),
                 engine::format_time(Time{static_cast<std::int64_t>(static_cast<double>(c.waiting.count()) / ranks)}),
                 engine::format_time(
                     Time{static_cast<std::int64_t>(static_cast<double>(c.transferring.count()) / ranks)})});
    return out + "</table>";
}

std::string collectives_table(const RunSummary& s) {
    if (s.collectives.empty()) return "";
    std::string out = "<table id=\"collective-calls\">" +
                      row({"collectives", "kind", "algorithm", "protocol", "members", "calls", "bytes per call",
                           "waiting per call", "transferring per call", "busbw", "NCCL model"},
                          "th");
    for (std::size_t i = 0; i < s.collectives.size() && i < 20; ++i) {
        const CollectiveCalls& c = s.collectives[i];
        out += row({escape(c.group), collective_kind_name(c.kind), escape(c.algorithm), escape(c.protocol),
                    fmt::format("{}", c.members), fmt::format("{}", c.calls),
                    engine::format_bytes(static_cast<double>(c.bytes)), engine::format_time(c.waiting),
                    engine::format_time(c.transferring), fmt::format("{:.1f} GB/s", c.busbw_gbps),
                    c.nccl_model_us > 0 ? fmt::format("{:.1f} us", c.nccl_model_us) : "-"});
    }
    out +=
        "</table><p class=\"note\">Per call: waiting from the first member's arrival to the last's, transferring from "
        "then to the end; bus bandwidth = bytes x nccl-tests' bus factor / transferring.</p>";
    return out;
}

std::string memory_section(const RunSummary& s) {
    // Ranks with the same peak and parts share a bar.
    std::vector<std::pair<const RankMemory*, std::vector<std::uint32_t>>> groups;
    for (const RankMemory& m : s.memory) {
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& x) {
            return x.first->at_peak == m.at_peak && x.first->hbm_bytes == m.hbm_bytes;
        });
        if (it == groups.end())
            groups.push_back({&m, {m.rank}});
        else
            it->second.push_back(m.rank);
    }
    // At most 48 bars: the groups with the highest peaks, shown in rank order.
    constexpr std::size_t max_bars = 48;
    const std::size_t all_groups = groups.size();
    if (groups.size() > max_bars) {
        std::stable_sort(groups.begin(), groups.end(),
                         [](const auto& a, const auto& b) { return a.first->peak_bytes > b.first->peak_bytes; });
        groups.resize(max_bars);
        std::stable_sort(groups.begin(), groups.end(),
                         [](const auto& a, const auto& b) { return a.second.front() < b.second.front(); });
    }
    const std::array<std::string_view, memory_use_count> colours = {"#bab0ac", "#4c78a8", "#f58518", "#e45756",
                                                                    "#72b7b2", "#54a24b", "#eeca3b"};
    StackedBarChart chart{"memory", "memory at the rank's peak (GiB)", {}, {}, double(1ULL << 30), "GiB"};
    for (std::size_t u = 0; u < memory_use_count; ++u)
        chart.series.push_back({memory_use_name(static_cast<MemoryUse>(u)), std::string(colours[u])});
    chart.series.push_back({"free HBM", "#eeeeee"});
    for (const auto& [m, ranks] : groups) {
        Bar bar{rank_label(ranks), {m->at_peak.begin(), m->at_peak.end()}, ranks_note(ranks)};
        bar.values.push_back(std::max(0.0, m->hbm_bytes - m->peak_bytes));
        chart.bars.push_back(std::move(bar));
    }
    std::string out = stacked_bars(chart);
    if (all_groups > groups.size())
        out += fmt::format("<p class=\"note\">The {} groups of ranks with the highest peaks of {}.</p>", groups.size(),
                           all_groups);
    return out;
}

std::string what_if_section(const ReportRun& a, const ReportRun& b) {
    std::string out = "<table class=\"what-if-table\">" + row({"", escape(a.label), escape(b.label), "change"}, "th");
    auto line = [&](const std::string& name, double x, double y, const std::string& xs, const std::string& ys) {
        out += row({name, xs, ys, x > 0 ? fmt::format("{:+.1f}%", 100 * (y - x) / x) : "-"});
    };
    line("iteration", static_cast<double>(a.summary->makespan.count()),
         static_cast<double>(b.summary->makespan.count()), engine::format_time(a.summary->makespan),
         engine::format_time(b.summary->makespan));
    const auto ma = partition_stats(*a.summary).mean, mb = partition_stats(*b.summary).mean;
    for (std::size_t k = 0; k < ma.size(); ++k)
        line(std::string(partition_categories[k].name) + " (mean rank)", ma[k], mb[k],
             engine::format_time(Time{static_cast<std::int64_t>(ma[k])}),
             engine::format_time(Time{static_cast<std::int64_t>(mb[k])}));
    return out + "</table>";
}

}  // namespace

std::vector<RankGroup> rank_groups(const RunSummary& summary, std::size_t max_groups) {
    std::vector<RankGroup> groups;
    std::map<std::array<Time, partition_categories.size()>, std::size_t> index;  // ordered: no hash order anywhere
    for (const RankBreakdown& r : summary.ranks) {
        const auto key = partition(r);
        const auto [it, added] = index.emplace(key, groups.size());
        if (added) groups.push_back({{}, &r});
        groups[it->second].ranks.push_back(r.rank);
    }
    if (groups.size() <= max_groups) return groups;
    // Keep the outliers (most and least of each category), then the largest groups; show them in rank order.
    std::vector<std::uint8_t> keep(groups.size(), 0);
    std::size_t kept = 0;
    auto take = [&](std::size_t g) {
        if (!keep[g] && kept < max_groups) keep[g] = 1, ++kept;
    };
    for (std::size_t k = 0; k < partition_categories.size(); ++k) {
        std::size_t lo = 0, hi = 0;
        for (std::size_t g = 1; g < groups.size(); ++g) {
            const Time v = partition(*groups[g].breakdown)[k];
            if (v < partition(*groups[lo].breakdown)[k]) lo = g;
            if (v > partition(*groups[hi].breakdown)[k]) hi = g;
        }
        take(hi);
        take(lo);
    }
    std::vector<std::size_t> by_size(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) by_size[g] = g;
    std::stable_sort(by_size.begin(), by_size.end(),
                     [&](std::size_t a, std::size_t b) { return groups[a].ranks.size() > groups[b].ranks.size(); });
    for (const std::size_t g : by_size) take(g);
    std::vector<RankGroup> shown;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        if (keep[g]) shown.push_back(std::move(groups[g]));
    }
    return shown;
}

std::string html_report(const OpGraph& graph, const std::vector<ReportRun>& runs, const ReportOptions& options) {
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
    out += fmt::format("<title>{}</title><style>{}</style></head><body>\n", escape(options.title), css());
    out += fmt::format("<h1>{}</h1>\n", escape(options.title));
    if (runs.empty() || !runs.front().summary) return out + "</body></html>\n";
    const ReportRun& main = runs.front();
    const RunSummary& s = *main.summary;
    out += "<section id=\"run\"><h2>The run</h2>" + run_section(s, main.label) + "</section>\n";
    out += "<section id=\"ranks\"><h2>Where each rank's iteration goes</h2>" + ranks_section(s, options, "rank-bars") +
           "</section>\n";
    const CriticalPath& cp = s.critical_path;
    const bool has_path = !cp.steps.empty() || cp.compute + cp.communication + cp.copies + cp.waiting > Time{0};
    out +=
        "<section id=\"critical-path\"><h2>Critical path</h2>" +
        (has_path ? critical_path_section(graph, s)
                  : std::string("<p class=\"note\">None: the summary has no critical path (a traced timeline).</p>")) +
        "</section>\n";
    const bool has_links = (main.timeline && !main.timeline->counters.empty()) || !s.top_links.empty();
    out += "<section id=\"links\"><h2>Links over time</h2>" +
           (has_links ? links_section(s, main.timeline, options)
                      : std::string("<p class=\"note\">No link traffic recorded (a traced timeline, or a run without "
                                    "link counters).</p>")) +
           "</section>\n";
    out += "<section id=\"communicators\"><h2>Communication by group</h2>" + communication_section(s) +
           collectives_table(s) + "</section>\n";
    if (!s.memory.empty())
        out += "<section id=\"memory-section\"><h2>Memory per rank</h2>" + memory_section(s) + "</section>\n";
    for (std::size_t k = 1; k < runs.size(); ++k) {
        if (!runs[k].summary) continue;
        const std::string id = k == 1 ? "what-if" : fmt::format("beside-{}", k);
        out += fmt::format("<section id=\"{}\"><h2>{} beside {}</h2>", id, escape(runs[k].label), escape(main.label)) +
               what_if_section(main, runs[k]);
        out += "<h3>" + escape(runs[k].label) + ": where each rank's iteration goes</h3>" +
               ranks_section(*runs[k].summary, options, id + "-rank-bars") + "</section>\n";
    }
    out +=
        "<p class=\"note\">Written by clustersim; every value but the collective calls' table is in "
        "summary.json.</p></body></html>\n";
    return out;
}

}  // namespace clustersim::traces::report
