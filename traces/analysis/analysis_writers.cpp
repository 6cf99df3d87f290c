#include "traces/analysis/analysis_writers.h"

#include <fmt/format.h>

#include "engine/units.h"
#include "traces/json_text.h"
#include "traces/perfetto_writer.h"

namespace clustersim::traces::analysis {

namespace {

double percent(Time part, Time whole) {
    return whole.count() > 0 ? 100.0 * static_cast<double>(part.count()) / static_cast<double>(whole.count()) : 0.0;
}

std::string us(Time t) { return microseconds_text(t); }

}  // namespace

std::string analysis_table(const TraceAnalysis& a) {
    std::string out =
        "temporal breakdown over each rank's kernel span (HTA), and communication overlapped by compute:\n";
    out += fmt::format("{:>6} {:>12} {:>8} {:>9} {:>12} {:>9} {:>11} {:>11} {:>11}\n", "rank", "span", "idle%",
                       "compute%", "non-compute%", "overlap%", "host wait", "kernel wait", "other wait");
    for (const RankTemporal& r : a.ranks)
        out += fmt::format("{:>6} {:>12} {:>8.2f} {:>9.2f} {:>12.2f} {:>9.2f} {:>11} {:>11} {:>11}\n", r.rank,
                           engine::format_time(r.span), percent(r.idle, r.span), percent(r.compute, r.span),
                           percent(r.non_compute, r.span), 100 * r.overlap_fraction(), engine::format_time(r.host_wait),
                           engine::format_time(r.kernel_wait), engine::format_time(r.other_wait));
    out += "\nkernels by kind (all ranks):\n";
    for (const KernelStat& k : a.kernels_by_kind)
        out += fmt::format("  {:<14} {:>9} kernels {:>14}\n", k.name, k.count, engine::format_time(k.total));
    out += "\nlongest kernels (total over all ranks):\n";
    for (const KernelStat& k : a.top_kernels)
        out += fmt::format("  {:>14} {:>7}x  max {:>12}  {:<13} {}\n", engine::format_time(k.total), k.count,
                           engine::format_time(k.max), kernel_kind_name(k.kind),
                           k.name.size() > 80 ? k.name.substr(0, 77) + "..." : k.name);
    out += "\nlaunch delay (kernel start - end of its launch call):\n";
    for (const LaunchStats& l : a.launches)
        out += fmt::format("  rank {:>4}: {:>7} kernels, mean {:>11}, p50 {:>11}, p95 {:>11}, max {:>11}\n", l.rank,
                           l.kernels, engine::format_time(l.mean), engine::format_time(l.p50),
                           engine::format_time(l.p95), engine::format_time(l.max));
    if (!a.stragglers.empty()) {
        out += "\nlate arrival at collectives (kernel start - the first member's, shared clock):\n";
        for (std::size_t i = 0; i < a.stragglers.size() && i < 8; ++i) {
            const Straggler& s = a.stragglers[i];
            out += fmt::format("  rank {:>4}: {:>6} calls, late {:>12} in all, at most {:>12}, last to start {}x\n",
                               s.rank, s.calls, engine::format_time(s.total_lateness),
                               engine::format_time(s.max_lateness), s.last_to_arrive);
        }
    }
    if (!a.communicators.empty()) {
        out += "\ncollectives by communicator (per rank: calls, bytes, kernel time; skew; bus bandwidth):\n";
        for (const CommunicatorStats& c : a.communicators)
            out += fmt::format("  {:<20} {:<15} {:>4} ranks {:>6} calls {:>12} {:>12}  skew {:>11}  {:>8.2f} GB/s\n",
                               c.group, collective_kind_name(c.kind), c.ranks, c.calls,
                               engine::format_bytes(static_cast<double>(c.bytes)), engine::format_time(c.kernel_time),
                               engine::format_time(c.skew), c.busbw_gbps);
    }
    return out;
}

std::string analysis_json(const TraceAnalysis& a) {
    std::string out = "{\n  \"ranks\": [";
    for (std::size_t i = 0; i < a.ranks.size(); ++i) {
        const RankTemporal& r = a.ranks[i];
        out += fmt::format(
            "{}\n    {{\"rank\": {}, \"span_us\": {}, \"idle_us\": {}, \"compute_us\": {}, \"non_compute_us\": {}, "
            "\"communication_us\": {}, \"memory_us\": {}, \"communication_overlapped_us\": {}, "
            "\"overlap_fraction\": {}, \"host_wait_us\": {}, \"kernel_wait_us\": {}, \"other_wait_us\": {}}}",
            i ? "," : "", r.rank, us(r.span), us(r.idle), us(r.compute), us(r.non_compute), us(r.communication),
            us(r.memory), us(r.communication_overlapped), json_number(r.overlap_fraction()), us(r.host_wait),
            us(r.kernel_wait), us(r.other_wait));
    }
    auto kernels = [&](const char* key, const std::vector<KernelStat>& list) {
        out += fmt::format("\n  ],\n  \"{}\": [", key);
        for (std::size_t i = 0; i < list.size(); ++i)
            out += fmt::format(
                "{}\n    {{\"name\": {}, \"kind\": \"{}\", \"count\": {}, \"total_us\": {}, \"max_us\": {}}}",
                i ? "," : "", json_string(list[i].name), kernel_kind_name(list[i].kind), list[i].count,
                us(list[i].total), us(list[i].max));
    };
    kernels("kernels_by_kind", a.kernels_by_kind);
    kernels("top_kernels", a.top_kernels);
    out += "\n  ],\n  \"launch_delay\": [";
    for (std::size_t i = 0; i < a.launches.size(); ++i) {
        const LaunchStats& l = a.launches[i];
        out += fmt::format(
            "{}\n    {{\"rank\": {}, \"kernels\": {}, \"mean_us\": {}, \"p50_us\": {}, \"p95_us\": {}, "
            "\"max_us\": {}}}",
            i ? "," : "", l.rank, l.kernels, us(l.mean), us(l.p50), us(l.p95), us(l.max));
    }
    out += "\n  ],\n  \"queue_length\": [";
    for (std::size_t i = 0; i < a.queues.size(); ++i)
        out += fmt::format("{}\n    {{\"rank\": {}, \"stream\": {}, \"max\": {}, \"mean\": {}}}", i ? "," : "",
                           a.queues[i].rank, a.queues[i].stream, a.queues[i].max, json_number(a.queues[i].mean));
    out += "\n  ],\n  \"stragglers\": [";
    for (std::size_t i = 0; i < a.stragglers.size(); ++i) {
        const Straggler& s = a.stragglers[i];
        out += fmt::format(
            "{}\n    {{\"rank\": {}, \"calls\": {}, \"total_lateness_us\": {}, \"max_lateness_us\": {}, "
            "\"last_to_arrive\": {}}}",
            i ? "," : "", s.rank, s.calls, us(s.total_lateness), us(s.max_lateness), s.last_to_arrive);
    }
    out += "\n  ],\n  \"communicators\": [";
    for (std::size_t i = 0; i < a.communicators.size(); ++i) {
        const CommunicatorStats& c = a.communicators[i];
        out += fmt::format(
            "{}\n    {{\"group\": {}, \"kind\": \"{}\", \"ranks\": {}, \"calls\": {}, \"bytes\": {}, "
            "\"kernel_time_us\": {}, \"skew_us\": {}, \"busbw_GBps\": {}}}",
            i ? "," : "", json_string(c.group), collective_kind_name(c.kind), c.ranks, c.calls, c.bytes,
            us(c.kernel_time), us(c.skew), json_number(c.busbw_gbps));
    }
    return out + "\n  ]\n}\n";
}

}  // namespace clustersim::traces::analysis
