// Ordering one rank's Kineto events: the previous iteration's tail, recorded waits, the shared clock.
#include "traces/formats/kineto_rank_trace.h"

#include <algorithm>
#include <map>

namespace clustersim::traces::kineto {

/// GPU events with no launch record that ran on a stream before the first event launched in the window are the
/// previous iteration's tail (their launches came before the window): dropped, with the tail's end kept so that
/// the stream's leading wait is shown as such.
void clip_previous_tail(RankTrace& trace) {
    std::map<std::int64_t, Time> first_launched;  // stream -> start of its first event launched in the window
    for (const GpuEvent& g : trace.events) {
        if (g.launch_end.count() < 0) continue;
        auto [it, added] = first_launched.emplace(g.stream, g.start);
        if (!added) it->second = std::min(it->second, g.start);
    }
    std::map<std::int64_t, Time> tail_end;
    std::erase_if(trace.events, [&](const GpuEvent& g) {
        const auto it = first_launched.find(g.stream);
        if (g.launch_end.count() >= 0 || it == first_launched.end() || g.start >= it->second) return false;
        auto [t, added] = tail_end.emplace(g.stream, g.end);
        if (!added) t->second = std::max(t->second, g.end);
        return true;
    });
    trace.previous_tail.assign(tail_end.begin(), tail_end.end());
}

/// Turns cuda_sync "Stream Wait Event" records into event dependencies: the waiting stream's first event launched
/// after the cudaStreamWaitEvent call waits for the producer stream's last event launched before the
/// cudaEventRecord call (correlation ids grow with host call order). A record whose ends are not both in the
/// window, or that the trace's own times contradict, is ignored.
void resolve_recorded_waits(RankTrace& trace, const std::vector<RecordedWait>& waits) {
    if (waits.empty()) return;
    std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::uint32_t>>> by_stream;  // (correlation, event)
    for (std::uint32_t k = 0; k < trace.events.size(); ++k) {
        if (trace.events[k].correlation >= 0)
            by_stream[trace.events[k].stream].emplace_back(trace.events[k].correlation, k);
    }
    for (auto& [stream, list] : by_stream) std::sort(list.begin(), list.end());
    for (const RecordedWait& w : waits) {
        const auto consumers = by_stream.find(w.stream), producers = by_stream.find(w.producer_stream);
        if (consumers == by_stream.end() || producers == by_stream.end() || w.stream == w.producer_stream) continue;
        const auto& c = consumers->second;
        const auto& p = producers->second;
        const auto after = std::upper_bound(c.begin(), c.end(), std::make_pair(w.wait, UINT32_MAX));
        const auto before = std::lower_bound(p.begin(), p.end(), std::make_pair(w.record, std::uint32_t{0}));
        if (after == c.end() || before == p.begin()) continue;
        const std::uint32_t consumer = after->second, producer = std::prev(before)->second;
        GpuEvent& e = trace.events[consumer];
        if (producer >= consumer || trace.events[producer].end > e.start + wait_tolerance) continue;
        if (std::find(e.waits_on.begin(), e.waits_on.end(), producer) != e.waits_on.end()) continue;
        e.waits_on.push_back(producer);
        ++trace.recorded_waits;
    }
}

/// Places the files on one time axis (KinetoAlign). With a shared clock every rank's window starts where the
/// earliest one does, so a rank that started late carries its lateness as a leading host gap.
void align_ranks(std::vector<RankTrace>& traces, KinetoAlign align) {
    if (align == KinetoAlign::automatic) {
        double lo = traces.front().base_us, hi = lo;
        for (const auto& t : traces) {
            lo = std::min(lo, t.base_us);
            hi = std::max(hi, t.base_us);
        }
        align = traces.size() > 1 && hi - lo <= 60e6 ? KinetoAlign::clock : KinetoAlign::step;
    }
    if (align == KinetoAlign::none) return;
    if (align == KinetoAlign::step) {
        for (auto& t : traces) t.shift(Time{0} - t.window_start);
        return;
    }
    double base = traces.front().base_us;
    for (const auto& t : traces) base = std::min(base, t.base_us);
    Time start{INT64_MAX};
    for (auto& t : traces) {
        t.shift(from_us(t.base_us - base));
        start = std::min(start, t.window_start);
    }
    for (auto& t : traces) t.window_start = start;
}

}  // namespace clustersim::traces::kineto
