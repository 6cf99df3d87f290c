// Kineto import. Per file: pick the iteration window (ProfilerStep#N on the CPU), take the GPU events (kernels,
// memcpy, memset) whose launch falls in it, map NCCL kernels to collectives (kind from the kernel name, size,
// dtype and process group from the kernel's args, or else from the enclosing nccl:* / record_param_comms CPU op),
// and order each stream by time. Gaps a stream spent waiting on the host become delay ops. Cross-stream waits come
// from the trace's cudaStreamWaitEvent records where it has them (cuda_sync events); otherwise a kernel that
// started later than both its launch and its stream predecessor, right when a kernel on another stream ended, gets
// a dependency on that kernel. GPU events of the previous iteration (no launch record, before the stream's first
// launched event) are clipped.
#include "traces/formats/kineto_reader.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include "engine/error.h"
#include "engine/log.h"
#include "traces/formats/kineto_events.h"
#include "traces/formats/kineto_names.h"
#include "traces/formats/kineto_rank_trace.h"
#include "traces/formats/member_sizes.h"
#include "traces/text_file.h"

namespace clustersim::traces {

namespace {

using engine::Time;
using namespace kineto;

[[noreturn]] void reject(const std::string& file, const std::string& what) {
    throw engine::InputError(engine::SourceLocation{file}, what);
}

/// A CPU op that can carry a collective's kind and size: nccl:* annotations and record_param_comms.
struct CommCpuOp {
    Time start{}, end{};
    std::string name;
    std::vector<std::uint64_t> tensor_bytes;  // each non-empty input tensor's bytes, in order
    DataType dtype = DataType::fp32;
    std::optional<CollectiveKind> kind;  // from the op's name (nccl:all_reduce, nccl:_all_gather_base, ...)

    /// The size in our convention: all_gather each rank's contribution (the smaller of _all_gather_base's output
    /// and input), reduce_scatter the whole buffer (the larger), otherwise the first tensor.
    [[nodiscard]] std::uint64_t bytes(CollectiveKind as) const {
        if (tensor_bytes.empty()) return 0;
        if (as == CollectiveKind::all_gather) return *std::min_element(tensor_bytes.begin(), tensor_bytes.end());
        if (as == CollectiveKind::reduce_scatter) return *std::max_element(tensor_bytes.begin(), tensor_bytes.end());
        return tensor_bytes.front();
    }
};

/// A size read from a trace, as whole bytes: beyond what an op holds, 2^48 - 2 (or negative, or not finite), it is an
/// input error, never a wrapped value.
std::uint64_t checked_bytes(double bytes, const std::string& file, std::size_t event) {
    if (!(bytes >= 0) || bytes > static_cast<double>(Op::max_op_bytes))
        reject(file, fmt::format("traceEvents[{}]: a message of {} bytes is out of range (expected 0 to 2^48 - 2)",
                                 event, bytes));
    return static_cast<std::uint64_t>(bytes);
}

RankTrace parse_rank(const std::string& file, const KinetoOptions& options) {
    const KinetoFile parsed = parse_kineto_events(read_text_file(file), file);
    RankTrace trace;
    trace.file = file;
    // distributedInfo's rank and world_size: whole numbers in range, never wrapped or truncated.
    const auto whole = [&](double v, const char* key, double low) {
        if (!(v >= low && v <= 16'777'216.0) || v != static_cast<double>(static_cast<std::uint32_t>(v)))
            reject(file,
                   fmt::format("distributedInfo.{}: expected an integer from {} to 16777216, got {}", key, low, v));
        return static_cast<std::uint32_t>(v);
    };
    trace.world = std::max<std::uint32_t>(1, whole(parsed.world_size, "world_size", 0));
    trace.rank = whole(parsed.rank, "rank", 0);
    trace.gpu = parsed.gpu;
    // Timestamps are epoch microseconds (about 1.7e15): in picoseconds they would overflow, so every time is
    // taken relative to the earliest event of the file (in double microseconds first, exact to well below 1 ns).
    if (!parsed.has_ts) reject(file, "no timed events in 'traceEvents'");
    const double base_us = parsed.min_ts_us;
    trace.base_us = base_us;
    auto time_of = [base_us](const KinetoEvent& e) { return from_us(e.ts_us - base_us); };
    // Pass 1: iteration windows, launches, communication CPU ops.
    std::map<int, std::pair<Time, Time>> steps;
    std::map<std::int64_t, Time> launch_end;  // correlation -> end of the launch call
    std::vector<CommCpuOp> comm_ops;
    std::vector<RecordedWait> waits;
    for (const KinetoEvent& e : parsed.events) {
        if (!e.has_ts) reject(file, fmt::format("traceEvents[{}]: expected an event with a numeric 'ts'", e.index));
        // Times in range before conversion to picoseconds: beyond about 28 hours they cannot be represented.
        constexpr double max_us = 1e11;
        if (!(e.dur_us >= 0 && e.dur_us <= max_us))
            reject(file, fmt::format("traceEvents[{}] '{}': 'dur' {} us is out of range (expected 0 to 1e11 us)",
                                     e.index, e.name.substr(0, 80), e.dur_us));
        if (!(e.ts_us - base_us <= max_us))
            reject(file, fmt::format("traceEvents[{}] '{}': 'ts' lies {} us after the trace's first event (at most "
                                     "1e11 us)",
                                     e.index, e.name.substr(0, 80), e.ts_us - base_us));
        // Ids (streams, correlations) are whole numbers, read as doubles: in range before any conversion to an
        // integer (outside it the conversion is undefined), never truncated.
        for (const auto& [key, id] : {std::pair<const char*, double>{"stream", e.stream},
                                      {"correlation", e.correlation},
                                      {"wait_on_stream", e.wait_on_stream},
                                      {"wait_on_cuda_event_record_corr_id", e.wait_on_record_correlation}}) {
            if (!(std::fabs(id) <= 9.007199254740992e15) || id != std::floor(id))
                reject(file, fmt::format("traceEvents[{}] '{}': args.{} {} is not an id (expected a whole number of at "
                                         "most 2^53)",
                                         e.index, e.name.substr(0, 80), key, id));
        }
        const Time ts = time_of(e), end = ts + from_us(e.dur_us);
        if (e.name.rfind("ProfilerStep#", 0) == 0) {
            steps[std::atoi(e.name.c_str() + 13)] = {ts, end};
        } else if (e.cat == "cuda_runtime" || e.cat == "cuda_driver") {
            if (e.correlation >= 0) launch_end[static_cast<std::int64_t>(e.correlation)] = end;
        } else if (e.cat == "cuda_sync") {
            if (e.name == "Stream Wait Event" && e.has_stream && e.wait_on_stream >= 0 &&
                e.wait_on_record_correlation >= 0 && e.correlation >= 0)
                waits.push_back({static_cast<std::int64_t>(e.stream), static_cast<std::int64_t>(e.wait_on_stream),
                                 static_cast<std::int64_t>(e.correlation),
                                 static_cast<std::int64_t>(e.wait_on_record_correlation)});
        } else if ((e.cat == "cpu_op" || e.cat == "user_annotation") &&
                   (e.name.rfind("nccl:", 0) == 0 || e.name == "record_param_comms")) {
            CommCpuOp op{ts, end, e.name, {}, DataType::fp32, collective_named(e.name)};
            for (std::size_t k = 0; k < e.input_dims.size(); ++k) {
                if (e.input_dims[k].empty()) continue;
                double elements = 1;
                for (const double d : e.input_dims[k]) elements *= d;
                const auto [type, size] = dtype_of(k < e.input_types.size() ? e.input_types[k] : "float");
                if (op.tensor_bytes.empty()) op.dtype = type;
                op.tensor_bytes.push_back(checked_bytes(elements * size, file, e.index));
            }
            comm_ops.push_back(op);
        }
    }
    if (steps.empty()) {
        trace.window_start = Time{INT64_MAX};
        trace.window_end = Time{INT64_MIN};
    } else if (options.iteration) {
        const auto it = steps.find(*options.iteration);
        if (it == steps.end()) {
            std::string known;
            for (const auto& [n, w] : steps) known += fmt::format("{}{}", known.empty() ? "" : ", ", n);
            reject(file, fmt::format("no ProfilerStep#{} in the trace (it has: {})", *options.iteration, known));
        }
        std::tie(trace.window_start, trace.window_end) = it->second;
    } else {
        std::tie(trace.window_start, trace.window_end) = steps.begin()->second;
    }
    std::sort(comm_ops.begin(), comm_ops.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    // Pass 2: GPU events of the window.
    for (const KinetoEvent& e : parsed.events) {
        if (e.cat != "kernel" && e.cat != "gpu_memcpy" && e.cat != "gpu_memset") continue;
        if (!e.has_stream) reject(file, fmt::format("traceEvents[{}]: GPU event without args.stream", e.index));
        GpuEvent g;
        g.name = e.name;
        g.stream = static_cast<std::int64_t>(e.stream);
        g.start = time_of(e);
        g.end = g.start + from_us(e.dur_us);
        g.correlation = e.correlation >= 0 ? static_cast<std::int64_t>(e.correlation) : -1;
        if (const auto it = launch_end.find(static_cast<std::int64_t>(e.correlation));
            e.correlation >= 0 && it != launch_end.end())
            g.launch_end = it->second;
        const Time anchor = g.launch_end.count() >= 0 ? g.launch_end : g.start;
        if (!steps.empty() && (anchor < trace.window_start || anchor > trace.window_end)) continue;
        if (e.cat == "gpu_memcpy") {
            g.bytes = checked_bytes(e.bytes, file, e.index);
            g.kind = g.name.find("HtoD") != std::string::npos   ? OpKind::memcpy_h2d
                     : g.name.find("DtoH") != std::string::npos ? OpKind::memcpy_d2h
                                                                : OpKind::compute;
            g.kernel_class = KernelClass::elementwise;
        } else if (e.cat == "gpu_memset") {
            g.kernel_class = KernelClass::elementwise;
        } else if (const std::string lower = lowercase(g.name); other_comm_kernel(g.name, lower, options)) {
            // Communication outside NCCL (DeepEP, NVSHMEM, custom all-to-all kernels): an all-to-all over the job,
            // sized by its bytes arg when it has one, else keeping its traced time (the import counts those).
            g.kind = OpKind::collective;
            g.collective = CollectiveKind::all_to_all;
            g.kernel_class = KernelClass::communication;
            g.bytes = checked_bytes(e.bytes, file, e.index);
        } else if (const auto coll = nccl_kind(g.name)) {
            g.kind = OpKind::collective;
            g.collective = *coll;
            g.kernel_class = KernelClass::communication;
            // The innermost communication CPU op around the launch names the collective (a SendRecv kernel
            // inside nccl:all_reduce is an all-reduce) and may carry its size.
            const Time at = g.launch_end.count() >= 0 ? g.launch_end : g.start;
            const CommCpuOp* enclosing = nullptr;
            for (const CommCpuOp& c : comm_ops) {
                if (c.start > at) break;
                if (c.end >= at && (c.kind || !c.tensor_bytes.empty())) enclosing = &c;
            }
            if (enclosing && enclosing->kind) g.collective = *enclosing->kind;
            if (e.in_msg_nelems >= 0) {
                // The kernel's own record (NCCL's profiler args) is the most precise.
                const auto [type, size] = dtype_of(e.dtype.empty() ? "Float" : e.dtype);
                g.dtype = type;
                g.bytes = checked_bytes(e.in_msg_nelems * size, file, e.index);
                if (const auto named = collective_named(e.collective_name)) g.collective = *named;
            } else if (enclosing) {
                g.bytes = enclosing->bytes(g.collective);
                g.dtype = enclosing->dtype;
            }
            if (!e.pg_ranks.empty()) {
                g.group_ranks = parse_rank_list(e.pg_ranks);
                g.group = e.pg_name + ":" + e.pg_description;
            }
        } else {
            g.kernel_class = classify(lower);  // the name lowercased once for both checks
        }
        trace.events.push_back(std::move(g));
    }
    if (trace.events.empty()) reject(file, "no GPU events in the selected iteration");
    if (steps.empty()) {
        for (const auto& g : trace.events) {
            trace.window_start =
                std::min(trace.window_start, g.launch_end.count() >= 0 ? std::min(g.launch_end, g.start) : g.start);
            trace.window_end = std::max(trace.window_end, g.end);
        }
    }
    if (!steps.empty()) clip_previous_tail(trace);
    // In start order across streams (ties by stream): every op that ended before an op started is added before
    // it, whatever the streams' ids, so a wait can be traced to any other stream (docs/formats.md).
    std::stable_sort(trace.events.begin(), trace.events.end(), [](const GpuEvent& a, const GpuEvent& b) {
        return a.start != b.start ? a.start < b.start : a.stream < b.stream;
    });
    resolve_recorded_waits(trace, waits);
    return trace;
}

/// Which job ranks the graph simulates: `simulated[j]` is job rank j's rank in the graph (none when folded away).
struct RankMap {
    std::uint32_t world = 0;
    std::vector<std::uint32_t> simulated;
    static constexpr std::uint32_t none = UINT32_MAX;
};

/// Appends rank `rank`'s ops from `trace` to the graph.
void build_rank(OpGraph& g, const RankTrace& trace, std::uint32_t rank, const KinetoOptions& options,
                const RankMap& ranks_of, std::map<std::string, CommId>& comms) {
    const RankId r{rank};
    // Per event: its op id and stream end times, to infer cross-stream waits.
    std::vector<std::pair<Time, OpId>> ends;  // (end, op) of events already added, all streams
    // The rank's streams, created in id order; each with the end of its latest op.
    std::vector<std::int64_t> ids;
    for (const GpuEvent& e : trace.events) ids.push_back(e.stream);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::vector<StreamId> stream_of(ids.size());
    std::vector<Time> stream_end(ids.size(), trace.window_start);
    for (std::size_t k = 0; k < ids.size(); ++k) stream_of[k] = g.stream(r, fmt::format("stream {}", ids[k]));
    std::vector<Time> tail_end(ids.size(), Time{INT64_MIN});
    for (const auto& [id, end] : trace.previous_tail)
        tail_end[static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin())] = end;
    std::vector<OpId> op_of_event;
    op_of_event.reserve(trace.events.size());
    for (const GpuEvent& e : trace.events) {
        const auto slot = static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), e.stream) - ids.begin());
        const StreamId stream = stream_of[slot];
        Time& previous_end = stream_end[slot];
        if (tail_end[slot] > previous_end) {
            // The previous iteration's tail still ran on this stream: a wait of its own, not host time.
            Op delay{stream, g.intern("previous iteration"), OpKind::delay};
            const Time waited = std::min(tail_end[slot], e.start) - previous_end;
            if (options.keep_gaps && waited > Time{0}) g.add(delay, {}, waited);
            previous_end += waited;
            tail_end[slot] = Time{INT64_MIN};
        }
        // Host time: until the launch finished (or, without a launch record, until the kernel started).
        const Time launched = std::max(previous_end, e.launch_end.count() >= 0 ? e.launch_end : e.start);
        std::vector<OpId> deps;
        // Waits the trace records (cudaStreamWaitEvent): dependencies as they are, whatever the times suggest.
        Time recorded{INT64_MIN};  // the latest traced end of the ops it waits for
        for (const std::uint32_t p : e.waits_on) {
            deps.push_back(op_of_event[p]);
            recorded = std::max(recorded, trace.events[p].end);
        }
        const Time ready = std::max(launched, recorded);
        Time host_gap = std::min(e.start, launched) - previous_end;
        Time waited_for{INT64_MIN};  // the end of the dependency it waited for, when one explains its start
        if (recorded > launched && e.start - recorded <= wait_tolerance) {
            // Explained by the record: the stream's own time is only what the host took.
            waited_for = recorded;
        } else if (e.start - ready > wait_tolerance) {
            // It waited for something else: the other stream's op that ended last before it started.
            OpId cause;
            Time cause_end{INT64_MIN};
            for (const auto& [end, op] : ends) {
                if (end <= e.start && end > cause_end && g.ops[op.index()].stream != stream) {
                    cause_end = end;
                    cause = op;
                }
            }
            if (cause.valid() && e.start - cause_end <= wait_tolerance && cause_end > ready &&
                std::find(deps.begin(), deps.end(), cause) == deps.end()) {
                deps.push_back(cause);
                waited_for = cause_end;
            } else
                host_gap = e.start - previous_end;  // unexplained: keep it as host time
        } else {
            // Ready and started within the tolerance: the launch/dispatch gap between back-to-back kernels (1-2 us
            // on the profiles in ../shared/data) is part of the stream's time, kept as the trace shows it.
            host_gap = e.start - previous_end;
        }
        if (options.keep_gaps && host_gap > Time{0}) {
            Op delay{stream, g.intern("host gap"), OpKind::delay};
            g.add(delay, {}, host_gap);
        }
        if (options.keep_gaps && waited_for.count() != INT64_MIN && e.start > waited_for) {
            // The dispatch gap between the awaited kernel's end and this start, kept after the dependency.
            Op delay{stream, g.intern("dispatch gap"), OpKind::delay};
            g.add(delay, deps, e.start - waited_for);
            deps.clear();
        }
        Op op{stream, g.intern(e.name.substr(0, e.name.find('('))), e.kind, e.kernel_class, e.dtype};
        op.set_bytes(e.bytes);
        if (e.kind == OpKind::collective) {
            op.collective = e.collective;
            std::vector<std::uint32_t> members = e.group_ranks;
            std::string name = e.group.empty() ? "world" : e.group;
            if (members.empty()) {
                for (std::uint32_t k = 0; k < ranks_of.world; ++k) members.push_back(k);
            }
            auto it = comms.find(name);
            if (it == comms.end()) {
                std::vector<RankId> ranks;
                for (const auto m : members) {
                    if (m >= ranks_of.world)
                        reject(trace.file, fmt::format("process group '{}' names rank {}, but the job has {} ranks",
                                                       name, m, ranks_of.world));
                    if (ranks_of.simulated[m] != RankMap::none) ranks.push_back(RankId{ranks_of.simulated[m]});
                }
                it = comms.emplace(name, g.communicator(name, ranks)).first;
                // Members not simulated: the group is folded and keeps its whole membership.
                if (ranks.size() < members.size()) g.comms[it->second.index()].job_members = members;
            }
            op.set_comm(it->second);
        }
        const OpId id = g.add(op, deps, e.end - e.start);  // collectives: the traced kernel time, for comparison only
        op_of_event.push_back(id);
        ends.emplace_back(e.end, id);
        previous_end = e.end;
    }
}

}  // namespace

bool looks_like_kineto(const std::string& text) {
    return text.find("\"traceEvents\"") != std::string::npos || text.find("\"schemaVersion\"") != std::string::npos;
}

std::vector<RankTrace> kineto::read_rank_traces(const std::vector<std::string>& files, const KinetoOptions& options) {
    if (files.empty()) throw engine::InputError("no trace files given");
    std::vector<RankTrace> traces;
    for (const auto& f : files) traces.push_back(parse_rank(f, options));
    std::set<std::uint32_t> seen;
    for (const RankTrace& t : traces) {
        if (!seen.insert(t.rank).second) reject(t.file, fmt::format("rank {} is given twice", t.rank));
    }
    align_ranks(traces, options.align);
    return traces;
}

OpGraph read_kineto(const std::vector<std::string>& files, const KinetoOptions& options) {
    if (files.empty()) throw engine::InputError("no trace files given");
    std::vector<RankTrace> traces;
    for (const auto& f : files) traces.push_back(parse_rank(f, options));
    const std::uint32_t world = options.world_size ? options.world_size : traces.front().world;
    std::map<std::uint32_t, std::size_t> by_rank;
    for (std::size_t i = 0; i < traces.size(); ++i) {
        const RankTrace& t = traces[i];
        if (t.world != traces.front().world && !options.world_size)
            reject(t.file, fmt::format("world size {} differs from {}'s {}", t.world, traces.front().file,
                                       traces.front().world));
        if (t.rank >= world) reject(t.file, fmt::format("rank {} is outside a world of {} ranks", t.rank, world));
        if (!by_rank.emplace(t.rank, i).second) reject(t.file, fmt::format("rank {} is given twice", t.rank));
    }
    // Refuse a fill past a billion ops (about 70 GB) with a message rather than running out of memory.
    std::uint64_t expanded = 0;
    for (std::uint32_t r = 0; r < world; ++r) {
        const auto it = by_rank.find(r);
        expanded += traces[it != by_rank.end() ? it->second : by_rank.begin()->second].events.size();
    }
    if (!options.fold && expanded > 1'000'000'000)
        reject(traces.front().file, fmt::format("filling {} ranks from {} file(s) expands to about {} ops: too large "
                                                "to replay (give a smaller --world-size, or fold the missing ranks)",
                                                world, files.size(), expanded));
    align_ranks(traces, options.align);
    OpGraph g;
    g.source = files.size() == 1 ? files.front() : fmt::format("{} and {} more", files.front(), files.size() - 1);
    RankMap ranks_of{world, std::vector<std::uint32_t>(world, RankMap::none)};
    const bool fold = options.fold && by_rank.size() < world;
    for (std::uint32_t r = 0; r < world; ++r) {
        if (!fold) {
            ranks_of.simulated[r] = r;
        } else if (by_rank.count(r)) {
            ranks_of.simulated[r] = static_cast<std::uint32_t>(g.job_ranks.size());
            g.job_ranks.push_back(r);
        }
    }
    g.rank_count = fold ? static_cast<std::uint32_t>(by_rank.size()) : world;
    if (fold) g.job_rank_count = world;
    std::map<std::string, CommId> comms;
    Time traced{0};
    for (std::uint32_t r = 0; r < world; ++r) {
        // Ranks without a file replay the lowest given rank's trace (SPMD fill), or are folded away.
        if (ranks_of.simulated[r] == RankMap::none) continue;
        const auto it = by_rank.find(r);
        const RankTrace& t = traces[it != by_rank.end() ? it->second : by_rank.begin()->second];
        build_rank(g, t, ranks_of.simulated[r], options, ranks_of, comms);
        Time last{0};
        for (const auto& e : t.events) last = std::max(last, e.end);
        traced = std::max(traced, last - t.window_start);
    }
    g.traced_iteration = traced;
    g.traced_gpu = traces.front().gpu;
    std::size_t recorded = 0, tails = 0;
    for (const auto& t : traces) {
        recorded += t.recorded_waits;
        tails += t.previous_tail.size();
    }
    if (recorded > 0)
        engine::layer_log("traces").info("{}: {} cross-stream waits taken from cudaStreamWaitEvent records",
                                         files.front(), recorded);
    if (tails > 0)
        engine::layer_log("traces").info("{}: the previous iteration's tail clipped from {} stream(s)", files.front(),
                                         tails);
    reconcile_member_sizes(g, files.front());
    validate(g);
    // A collective the trace gives no size for is not simulated as 0 bytes: the replay keeps its traced kernel
    // time (docs/models.md "Replay").
    std::size_t unsized = 0;
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        unsized += g.ops[i].kind == OpKind::collective && g.ops[i].bytes() == 0 && g.has_duration(OpId::from_index(i));
    if (unsized > 0)
        engine::layer_log("traces").warn("{}: {} collectives without a size kept their traced duration", files.front(),
                                         unsized);
    return g;
}

}  // namespace clustersim::traces
