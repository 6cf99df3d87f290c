// The Timeline: what happened in a replay, as plain data. Per op: when it ended, and which op's end put it on the
// critical path, which is when it started (for communication: when its peers had arrived) but for the few starts
// kept apart; for the communication ops that waited, when they were ready (launched on their stream with their
// dependencies met). Plus transfers between ranks and counter series (links).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/time.h"
#include "traces/op_graph.h"

namespace clustersim::traces {

/// When an op started working (for communication: when its peers had arrived) and when it ended.
struct OpTiming {
    engine::Time start{-1};
    engine::Time end{-1};
    bool operator==(const OpTiming&) const = default;
};

/// A point-to-point transfer between ranks: drawn as a flow arrow from send to recv.
struct Transfer {
    OpId send;
    OpId recv;
    engine::Time start{};
    engine::Time end{};
    bool operator==(const Transfer&) const = default;
};

/// A link's traffic: exact totals, and its rate over time as a piecewise-constant series (value from
/// points[i].first until points[i+1].first), averaged over time bins (sim/network/link_utilization.h).
struct CounterSeries {
    std::string name;
    std::string unit;               // "GB/s"
    double capacity = 0;            // for utilization fractions; 0 when not applicable
    double contention_delay_s = 0;  // total contention delay attributed to this counter's link
    double bytes = 0;               // carried over the run (capacity x seconds)
    double peak = 0;                // highest rate held for a positive time, in the unit of capacity
    std::vector<std::pair<engine::Time, double>> points;
    engine::Time bin_width{};  // the bins the points average over (one width for every link of a run)
    std::vector<double> bins;  // carried in each bin (capacity x seconds), from time 0
    bool operator==(const CounterSeries&) const = default;
};

/// The `count` counters that carried the most bytes, ties by their order (indices, busiest first): the links the
/// outputs draw (Perfetto's counter tracks, the report's heatmap) and the replay keeps rate series for.
inline std::vector<std::size_t> busiest_counters(const std::vector<CounterSeries>& counters, std::size_t count) {
    std::vector<std::size_t> order(counters.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return counters[a].bytes > counters[b].bytes; });
    if (order.size() > count) order.resize(count);
    return order;
}

/// Something that happened to the cluster during the run (a link degraded or failed, a GPU failed).
struct TimelineMarker {
    engine::Time at{};
    std::string label;
    bool operator==(const TimelineMarker&) const = default;
};

struct Timeline {
    /// By OpId: when the op ended (-1: it did not run).
    std::vector<engine::Time> ends;
    /// By OpId: the op whose end determined the op's start (its own trigger, or for communication the trigger of
    /// the peer that arrived last); invalid when it started at time zero. Empty or shorter: invalid for the ops past
    /// its end.
    std::vector<OpId> critical_preds;
    [[nodiscard]] OpId critical_pred(OpId op) const {
        return op.index() < critical_preds.size() ? critical_preds[op.index()] : OpId::invalid();
    }
    /// The starts that are not their critical predecessor's end (or zero, for an op without one), by op id
    /// ascending (each once). An op starts when what it waited for ended: every op of an unfolded GPT-3 iteration
    /// does. A few of other runs do not: a collective member whose start is its end less its time on the network
    /// (after some of its peers' transfers began), an eager recv posted before its data (it starts with the
    /// transfer), the first op of a job that starts later. Kept apart: a start for every op was 8 bytes an op,
    /// 283 MB of that iteration on 1,024 GPUs.
    std::vector<std::pair<OpId, engine::Time>> starts;
    /// `op`'s start; `from` as for contention().
    [[nodiscard]] engine::Time start(OpId op, std::size_t& from) const {
        if (const engine::Time* found = starts.empty() ? nullptr : find(starts, op, from)) return *found;
        const OpId pred = critical_pred(op);
        return pred.valid() ? ends[pred.index()] : engine::Time{0};
    }
    [[nodiscard]] engine::Time start(OpId op) const {
        std::size_t from = 0;
        return start(op, from);
    }
    [[nodiscard]] engine::Time end(OpId op) const { return ends[op.index()]; }
    [[nodiscard]] OpTiming timing(OpId op, std::size_t& from) const { return {start(op, from), end(op)}; }
    [[nodiscard]] OpTiming timing(OpId op) const { return {start(op), end(op)}; }
    /// The ops timed.
    [[nodiscard]] std::size_t size() const { return ends.size(); }
    /// Appends the next op's timing, without a critical predecessor (timelines built from records: a trace's, a
    /// test's): its start kept in `starts` unless zero.
    void append(OpTiming timing) {
        if (timing.start != engine::Time{0}) starts.emplace_back(OpId::from_index(ends.size()), timing.start);
        ends.push_back(timing.end);
    }
    /// For communication: the part of an op's [start, end] beyond its time on an empty network (contention), for
    /// the ops that had some, by op id ascending (each once); every other op had none. Kept apart: most ops have
    /// none (computes, and calls that had their links to themselves).
    std::vector<std::pair<OpId, engine::Time>> contentions;
    /// `op`'s contention (zero when it had none), searched from `from`, the position the last search left (callers
    /// visiting ops in ascending order pass it back, so that each search starts where the last ended; an op before
    /// it is searched from the start).
    [[nodiscard]] engine::Time contention(OpId op, std::size_t& from) const {
        const engine::Time* found = find(contentions, op, from);
        return found ? *found : engine::Time{0};
    }
    [[nodiscard]] engine::Time contention(OpId op) const {
        std::size_t from = 0;
        return contention(op, from);
    }
    /// When a communication op that started after it was ready had been ready, for those ops, by op id ascending
    /// (each once). Every other op started when it was ready: computes, copies and memory ops at once, calls and
    /// messages whose peers were there. Kept apart: for most ops it would repeat the start.
    std::vector<std::pair<OpId, engine::Time>> waits;
    /// When `op`, which started at `start`, was ready (`start` when it did not wait); `from` as for contention().
    [[nodiscard]] engine::Time ready(OpId op, std::size_t& from, engine::Time start) const {
        const engine::Time* found = find(waits, op, from);
        return found ? *found : start;
    }
    [[nodiscard]] engine::Time ready(OpId op) const {
        std::size_t from = 0;
        return ready(op, from, start(op));
    }
    std::vector<TimelineMarker> markers;  // in time order
    std::vector<Transfer> transfers;
    std::vector<CounterSeries> counters;
    engine::Time makespan{};
    bool operator==(const Timeline&) const = default;

private:
    /// `op`'s entry in `list` (by op id ascending), or null: searched from position `from`, which is left at the
    /// place found (from the start when op's place is before `from`). Steps of 1, 2, 4... first, then a binary
    /// search within the last step: callers visit ops in ascending order, so the place is mostly at or just after
    /// `from` (one comparison), where a binary search of the rest of the list took 17 steps per op.
    static const engine::Time* find(const std::vector<std::pair<OpId, engine::Time>>& list, OpId op,
                                    std::size_t& from) {
        if (from > list.size() || (from > 0 && list[from - 1].first.value >= op.value)) from = 0;  // (out of order)
        if (from < list.size() && list[from].first.value >= op.value)  // (the common case: at the place already)
            return list[from].first == op ? &list[from].second : nullptr;
        std::size_t lo = from, hi = from;
        for (std::size_t step = 1; hi < list.size() && list[hi].first.value < op.value; step *= 2) {
            lo = hi + 1;
            hi = std::min(list.size(), lo + step);
        }
        const auto it = std::lower_bound(list.begin() + static_cast<std::ptrdiff_t>(lo),
                                         list.begin() + static_cast<std::ptrdiff_t>(hi), op,
                                         [](const auto& e, OpId id) { return e.first.value < id.value; });
        from = static_cast<std::size_t>(it - list.begin());
        return it != list.end() && it->first == op ? &it->second : nullptr;
    }
};

}  // namespace clustersim::traces
