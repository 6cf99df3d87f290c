#include "traces/summary_compare.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "engine/units.h"
#include "traces/report/categories.h"

namespace clustersim::traces {

namespace {

using engine::Time;

std::string change(double a, double b) {
    if (a == b) return "=";
    if (a == 0) return "new";
    return fmt::format("{:+.1f}%", 100 * (b - a) / a);
}

std::string time_row(const std::string& name, Time a, Time b) {
    return fmt::format("  {:<28} {:>14} {:>14} {:>9}\n", name, engine::format_time(a), engine::format_time(b),
                       change(static_cast<double>(a.count()), static_cast<double>(b.count())));
}

Time ps(double v) { return Time{std::llround(v)}; }

}  // namespace

std::string compare_table(const RunSummary& a, const RunSummary& b, const std::string& label_a,
                          const std::string& label_b) {
    std::string out = fmt::format("A: {} ({}, {}, {})\nB: {} ({}, {}, {})\n\n", label_a, a.scenario, a.topology,
                                  a.workload, label_b, b.scenario, b.topology, b.workload);
    out += fmt::format("  {:<28} {:>14} {:>14} {:>9}\n", "", "A", "B", "change");
    out += time_row("iteration", a.makespan, b.makespan);
    out += fmt::format("  {:<28} {:>14} {:>14} {:>9}\n", "ranks", a.ranks.size(), b.ranks.size(),
                       change(static_cast<double>(a.ranks.size()), static_cast<double>(b.ranks.size())));
    const report::PartitionStats sa = report::partition_stats(a), sb = report::partition_stats(b);
    out += "\nper rank, mean over ranks (largest in brackets):\n";
    for (std::size_t k = 0; k < report::partition_categories.size(); ++k) {
        out += fmt::format("  {:<28} {:>14} {:>14} {:>9}   ({} -> {})\n", report::partition_categories[k].name,
                           engine::format_time(ps(sa.mean[k])), engine::format_time(ps(sb.mean[k])),
                           change(sa.mean[k], sb.mean[k]), engine::format_time(ps(sa.largest[k])),
                           engine::format_time(ps(sb.largest[k])));
    }
    out += "\ncritical path:\n";
    out += time_row("compute", a.critical_path.compute, b.critical_path.compute);
    out += time_row("communication", a.critical_path.communication, b.critical_path.communication);
    out += time_row("copies", a.critical_path.copies, b.critical_path.copies);
    out += time_row("waiting", a.critical_path.waiting, b.critical_path.waiting);
    // Groups by name, in A's order then B's new ones.
    std::vector<std::string> groups;
    for (const auto* s : {&a, &b}) {
        for (const GroupCommunication& c : s->communication) {
            if (std::find(groups.begin(), groups.end(), c.group) == groups.end()) groups.push_back(c.group);
        }
    }
    if (!groups.empty()) out += "\ncommunication by group (all ranks: waiting for peers, transferring):\n";
    auto find = [](const RunSummary& s, const std::string& g) {
        const auto it = std::find_if(s.communication.begin(), s.communication.end(),
                                     [&](const GroupCommunication& c) { return c.group == g; });
        return it == s.communication.end() ? GroupCommunication{g} : *it;
    };
    for (const std::string& g : groups) {
        const GroupCommunication ca = find(a, g), cb = find(b, g);
        out += time_row(g + " waiting", ca.waiting, cb.waiting);
        out += time_row(g + " transferring", ca.transferring, cb.transferring);
    }
    // Links listed in either run, by how much their mean utilization changed.
    std::map<std::string, std::pair<double, double>> links;  // ordered by name: no hash order
    for (const LinkReport& l : a.top_links) links[l.name].first = l.mean_utilization;
    for (const LinkReport& l : b.top_links) links[l.name].second = l.mean_utilization;
    std::vector<std::pair<std::string, std::pair<double, double>>> changed(links.begin(), links.end());
    std::stable_sort(changed.begin(), changed.end(), [](const auto& x, const auto& y) {
        return std::abs(x.second.second - x.second.first) > std::abs(y.second.second - y.second.first);
    });
    if (!changed.empty())
        out += "\nlinks whose mean utilization changed most (of each run's most contended; 0 where not listed):\n";
    for (std::size_t i = 0; i < changed.size() && i < 10; ++i) {
        const auto& [name, u] = changed[i];
        out += fmt::format("  {:<40} {:>6.1f}% {:>6.1f}%\n", name, 100 * u.first, 100 * u.second);
    }
    return out;
}

}  // namespace clustersim::traces
