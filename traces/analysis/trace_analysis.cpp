#include "traces/analysis/trace_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "traces/analysis/intervals.h"
#include "traces/formats/kineto_rank_trace.h"

namespace clustersim::traces::analysis {

using kineto::GpuEvent;
using kineto::RankTrace;

const char* kernel_kind_name(KernelKind kind) {
    switch (kind) {
        case KernelKind::compute:
            return "compute";
        case KernelKind::communication:
            return "communication";
        case KernelKind::memory:
            return "memory";
    }
    return "?";
}

namespace {

KernelKind kind_of(const GpuEvent& e) {
    if (e.kind == OpKind::collective || e.kind == OpKind::send || e.kind == OpKind::recv)
        return KernelKind::communication;
    if (e.kind == OpKind::memcpy_h2d || e.kind == OpKind::memcpy_d2h) return KernelKind::memory;
    std::string lower = e.name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower.find("memcpy") != std::string::npos || lower.find("memset") != std::string::npos)
        return KernelKind::memory;
    return KernelKind::compute;
}

/// HTA's idle time breakdown on one stream (events in start order): each gap between a kernel's end and the next
/// start is kernel wait when shorter than the threshold; otherwise the part before the next kernel's launch call
/// returned is host wait and the rest other.
void idle_by_cause(const std::vector<const GpuEvent*>& stream, Time threshold, RankTemporal& r) {
    Time end{-1};
    for (const GpuEvent* e : stream) {
        if (end.count() >= 0 && e->start > end) {
            const Time gap = e->start - end;
            if (gap < threshold) {
                r.kernel_wait += gap;
            } else {
                const Time host = e->launch_end > end ? std::min(gap, e->launch_end - end) : Time{0};
                r.host_wait += host;
                r.other_wait += gap - host;
            }
        }
        end = std::max(end, e->end);
    }
}

QueueStats queue_of(std::uint32_t rank, std::int64_t stream, const std::vector<const GpuEvent*>& events) {
    // +1 when a kernel is launched (its launch call returned; its start when there is no record), -1 at its end.
    std::vector<std::pair<Time, int>> steps;
    for (const GpuEvent* e : events) {
        steps.emplace_back(e->launch_end.count() >= 0 ? std::min(e->launch_end, e->start) : e->start, +1);
        steps.emplace_back(e->end, -1);
    }
    std::sort(steps.begin(), steps.end());  // ends before launches at one instant
    QueueStats q{rank, stream, 0, 0};
    int depth = 0;
    double weighted = 0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        depth += steps[i].second;
        q.max = std::max<std::uint32_t>(q.max, static_cast<std::uint32_t>(std::max(0, depth)));
        if (i + 1 < steps.size())
            weighted += depth * static_cast<double>((steps[i + 1].first - steps[i].first).count());
    }
    const double span = steps.empty() ? 0 : static_cast<double>((steps.back().first - steps.front().first).count());
    q.mean = span > 0 ? weighted / span : 0;
    return q;
}

Time percentile(std::vector<Time>& sorted, double p) {
    if (sorted.empty()) return Time{0};
    const auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size()))) - 1;
    return sorted[std::min(k, sorted.size() - 1)];
}

}  // namespace

TraceAnalysis analyze_kineto(const std::vector<std::string>& files, const AnalysisOptions& options) {
    const std::vector<RankTrace> traces = kineto::read_rank_traces(files, options.kineto);
    TraceAnalysis out;
    std::map<std::string, KernelStat> by_name;  // ordered: no hash order in results
    std::vector<KernelStat> by_kind(3);
    for (std::size_t k = 0; k < 3; ++k) {
        by_kind[k].name = kernel_kind_name(static_cast<KernelKind>(k));
        by_kind[k].kind = static_cast<KernelKind>(k);
    }
    // Collective calls across ranks: (group, kind, position in the group's sequence) -> (rank, event) per member.
    using CallKey = std::tuple<std::string, CollectiveKind, std::uint64_t>;
    std::map<CallKey, std::vector<std::pair<std::uint32_t, const GpuEvent*>>> calls;
    // The job's iteration, as the replay reports the traced one: from the earliest rank's step start (its window)
    // to the last kernel's end.
    Time window_start = engine::max_time, window_end{0};
    for (const RankTrace& t : traces) {
        window_start = std::min(window_start, t.window_start);
        for (const GpuEvent& e : t.events) {
            window_start = std::min(window_start, e.start);
            window_end = std::max(window_end, e.end);
        }
    }
    if (window_start == engine::max_time) window_start = Time{0};

    struct RankSets {
        IntervalSet busy, comm;
        std::vector<Interval> waiting;  // parts of collective kernels before their last member started
        Time last_end{0};
    };
    std::vector<RankSets> sets(traces.size());
    for (std::size_t i = 0; i < traces.size(); ++i) {
        const RankTrace& t = traces[i];
        RankTemporal r;
        r.rank = t.rank;
        std::vector<Interval> all, compute, comm, memory;
        std::map<std::int64_t, std::vector<const GpuEvent*>> streams;
        std::map<std::pair<std::string, CollectiveKind>, std::uint64_t> sequence;
        LaunchStats launch{t.rank, 0, {}, {}, {}, {}};
        std::vector<Time> delays;
        for (const GpuEvent& e : t.events) {
            const KernelKind kind = kind_of(e);
            all.emplace_back(e.start, e.end);
            (kind == KernelKind::compute         ? compute
             : kind == KernelKind::communication ? comm
                                                 : memory)
                .emplace_back(e.start, e.end);
            streams[e.stream].push_back(&e);
            KernelStat& s = by_name[e.name];
            s.name = e.name;
            s.kind = kind;
            for (KernelStat* stat : {&s, &by_kind[static_cast<std::size_t>(kind)]}) {
                ++stat->count;
                stat->total += e.end - e.start;
                stat->max = std::max(stat->max, e.end - e.start);
            }
            if (e.launch_end.count() >= 0) delays.push_back(std::max(Time{0}, e.start - e.launch_end));
            if (e.kind == OpKind::collective) {
                const std::string group = e.group.empty() ? "world" : e.group;
                const std::uint64_t n = sequence[{group, e.collective}]++;
                calls[{group, e.collective, n}].emplace_back(t.rank, &e);
            }
            sets[i].last_end = std::max(sets[i].last_end, e.end);
        }
        const IntervalSet u_all = unite(all), u_compute = unite(compute), u_comm = unite(comm),
                          u_memory = unite(memory);
        if (!u_all.empty()) r.span = u_all.back().second - u_all.front().first;
        r.compute = length(u_compute);
        r.non_compute = length(u_all) - r.compute;
        r.idle = r.span - length(u_all);
        r.communication = length(u_comm);
        r.memory = length(u_memory);
        r.communication_overlapped = length(intersect(u_comm, u_compute));
        for (auto& [stream, events] : streams) {
            idle_by_cause(events, options.kernel_wait_threshold, r);
            out.queues.push_back(queue_of(t.rank, stream, events));
        }
        std::sort(delays.begin(), delays.end());
        launch.kernels = delays.size();
        if (!delays.empty()) {
            Time sum{0};
            for (const Time d : delays) sum += d;
            launch.mean = Time{sum.count() / static_cast<std::int64_t>(delays.size())};
            launch.p50 = percentile(delays, 0.5);
            launch.p95 = percentile(delays, 0.95);
            launch.max = delays.back();
        }
        out.launches.push_back(launch);
        out.ranks.push_back(r);
        sets[i].busy = join(u_compute, u_memory);
        sets[i].comm = u_comm;
    }
    out.kernels_by_kind = by_kind;
    for (auto& [name, s] : by_name) out.top_kernels.push_back(s);
    std::stable_sort(out.top_kernels.begin(), out.top_kernels.end(),
                     [](const KernelStat& a, const KernelStat& b) { return a.total > b.total; });
    if (out.top_kernels.size() > options.top_kernels) out.top_kernels.resize(options.top_kernels);

    // Stragglers and communicators from the matched calls.
    std::map<std::uint32_t, std::size_t> index_of;
    for (std::size_t i = 0; i < traces.size(); ++i) index_of[traces[i].rank] = i;
    std::map<std::uint32_t, Straggler> late;
    std::map<std::pair<std::string, CollectiveKind>, CommunicatorStats> comms;
    std::map<std::pair<std::string, CollectiveKind>, std::map<std::uint32_t, std::pair<std::uint64_t, Time>>> per_rank;
    std::map<std::pair<std::string, CollectiveKind>, std::pair<std::uint64_t, Time>> skews;
    std::map<std::pair<std::string, CollectiveKind>, Time> waits;  // kernel time before the last member started
    for (const auto& [key, members] : calls) {
        const auto& [group, kind, n] = key;
        Time first = engine::max_time, last{0};
        std::uint32_t last_rank = members.front().first;
        for (const auto& [rank, e] : members) {
            first = std::min(first, e->start);
            if (e->start >= last) last = e->start, last_rank = rank;
        }
        CommunicatorStats& c = comms[{group, kind}];
        c.group = group;
        c.kind = kind;
        c.ranks =
            std::max<std::uint32_t>(c.ranks, static_cast<std::uint32_t>(members.front().second->group_ranks.size()));
        auto& [calls_with_skew, skew_sum] = skews[{group, kind}];
        if (members.size() > 1) ++calls_with_skew, skew_sum += last - first;
        for (const auto& [rank, e] : members) {
            auto& [count, time] = per_rank[{group, kind}][rank];
            ++count;
            time += e->end - e->start;
            c.bytes += e->bytes;
            // The kernel's time before the last member started is waiting for peers.
            if (last > e->start) {
                sets[index_of[rank]].waiting.emplace_back(e->start, std::min(e->end, last));
                waits[{group, kind}] += std::min(e->end, last) - e->start;
            }
            if (members.size() < 2) continue;
            Straggler& s = late[rank];
            s.rank = rank;
            ++s.calls;
            s.total_lateness += e->start - first;
            s.max_lateness = std::max(s.max_lateness, e->start - first);
            s.last_to_arrive += rank == last_rank;
        }
    }
    for (auto& [key, c] : comms) {
        const auto& ranks = per_rank[key];
        if (c.ranks == 0) c.ranks = static_cast<std::uint32_t>(ranks.size());
        std::uint64_t calls_total = 0;
        Time time_total{0};
        for (const auto& [rank, ct] : ranks) calls_total += ct.first, time_total += ct.second;
        const auto n = static_cast<std::int64_t>(std::max<std::size_t>(1, ranks.size()));
        c.calls = calls_total / static_cast<std::uint64_t>(n);
        c.bytes /= static_cast<std::uint64_t>(n);
        c.kernel_time = Time{time_total.count() / n};
        const auto& [with_skew, skew_sum] = skews[key];
        c.skew = with_skew ? Time{skew_sum.count() / static_cast<std::int64_t>(with_skew)} : Time{0};
        const double seconds = engine::to_seconds(c.kernel_time);
        c.busbw_gbps =
            seconds > 0 ? static_cast<double>(c.bytes) * bus_bandwidth_factor(c.kind, c.ranks) / seconds / 1e9 : 0;
        out.communicators.push_back(c);
        out.summary.communication.push_back(GroupCommunication{
            fmt::format("{} {}", c.group, collective_kind_name(c.kind)), c.calls * static_cast<std::uint64_t>(n),
            c.bytes * static_cast<std::uint64_t>(n), waits[key], time_total - waits[key]});
    }
    for (auto& [rank, s] : late) out.stragglers.push_back(s);
    std::stable_sort(out.stragglers.begin(), out.stragglers.end(),
                     [](const Straggler& a, const Straggler& b) { return a.total_lateness > b.total_lateness; });

    // The simulation's partition, from the trace (docs/formats.md "analyze").
    RunSummary& s = out.summary;
    s.scenario = "traced";
    s.topology = "as traced";
    s.workload = files.size() == 1 ? files.front() : fmt::format("{} and {} more", files.front(), files.size() - 1);
    s.makespan = window_end - window_start;
    for (std::size_t i = 0; i < traces.size(); ++i) {
        const RankSets& x = sets[i];
        const IntervalSet waiting = intersect(unite(x.waiting), x.comm);
        const IntervalSet transferring = subtract(x.comm, waiting);
        RankBreakdown b;
        b.rank = traces[i].rank;
        b.iteration = s.makespan;
        b.compute = length(x.busy);
        b.communication = length(transferring);
        b.overlap = length(intersect(transferring, x.busy));
        b.exposed_communication = b.communication - b.overlap;
        b.peer_wait = length(subtract(waiting, x.busy));
        b.finished_early = x.last_end.count() > 0 ? window_end - x.last_end : Time{0};
        b.idle_other = b.iteration - b.compute - b.exposed_communication - b.peer_wait - b.finished_early;
        s.ranks.push_back(b);
    }
    std::sort(s.ranks.begin(), s.ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    std::sort(out.ranks.begin(), out.ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    return out;
}

}  // namespace clustersim::traces::analysis
