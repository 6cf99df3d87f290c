// One rank's Kineto trace as the import sees it: the iteration's GPU events on one time axis, and the steps that
// order them (clipping the previous iteration, recorded cross-stream waits, placing ranks on one clock).
// Internal to the Kineto reader.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/time.h"
#include "traces/formats/kineto_reader.h"
#include "traces/op_graph.h"

namespace clustersim::traces::kineto {

using engine::Time;

constexpr Time wait_tolerance{2'000'000};  // 2 us: a start this close to another stream's end is caused by it

inline Time from_us(double us) { return Time{static_cast<std::int64_t>(std::llround(us * 1e6))}; }

struct GpuEvent {
    std::int64_t stream = 0;
    Time start{}, end{};
    Time launch_end{-1};  // end of the CPU launch call, on the same clock
    std::int64_t correlation = -1;
    OpKind kind = OpKind::compute;
    KernelClass kernel_class = KernelClass::other;
    CollectiveKind collective = CollectiveKind::all_reduce;
    DataType dtype = DataType::fp32;
    std::uint64_t bytes = 0;
    std::string name;
    std::string group;  // process group name ("" = world)
    std::vector<std::uint32_t> group_ranks;
    std::vector<std::uint32_t> waits_on;  // events (indices in RankTrace::events) it waited for, as recorded
};

/// A recorded cross-stream wait: cudaStreamWaitEvent on `stream` (the wait call's correlation) for the event
/// recorded on `producer_stream` by the cudaEventRecord call of correlation `record`.
struct RecordedWait {
    std::int64_t stream = 0, producer_stream = 0;
    std::int64_t wait = -1, record = -1;
};

struct RankTrace {
    std::string file;
    std::uint32_t rank = 0;
    std::uint32_t world = 1;
    std::string gpu;  // deviceProperties[0].name
    Time window_start{}, window_end{};
    double base_us = 0;            // the file's earliest timestamp: every time above is relative to it
    std::vector<GpuEvent> events;  // sorted by (start, stream)
    // Streams whose first events in the window were the previous iteration's tail (dropped), with its end.
    std::vector<std::pair<std::int64_t, Time>> previous_tail;
    std::size_t recorded_waits = 0;  // dependencies taken from cuda_sync records

    void shift(Time by) {
        window_start += by;
        window_end += by;
        for (GpuEvent& e : events) {
            e.start += by;
            e.end += by;
            if (e.launch_end.count() >= 0) e.launch_end += by;
        }
        for (auto& [stream, end] : previous_tail) end += by;
    }
};

/// GPU events with no launch record that ran on a stream before the first event launched in the window are the
/// previous iteration's tail (their launches came before the window): dropped, with the tail's end kept so that
/// the stream's leading wait is shown as such.
void clip_previous_tail(RankTrace& trace);

/// Turns cuda_sync "Stream Wait Event" records into event dependencies (GpuEvent::waits_on); `trace.events` must
/// be in start order.
void resolve_recorded_waits(RankTrace& trace, const std::vector<RecordedWait>& waits);

/// Reads each file's iteration (one rank each; a rank given twice is an error) and places them on one time axis:
/// what `clustersim analyze` works on, without building a graph.
std::vector<RankTrace> read_rank_traces(const std::vector<std::string>& files, const KinetoOptions& options);

/// Places the files on one time axis (KinetoAlign).
void align_ranks(std::vector<RankTrace>& traces, KinetoAlign align);

}  // namespace clustersim::traces::kineto
