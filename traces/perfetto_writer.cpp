// Trace-event JSON, streamed as text: deterministic bytes, no document in memory.
#include "traces/perfetto_writer.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include <fmt/format.h>

#include "traces/json_text.h"

namespace clustersim::traces {

namespace {

/// Microseconds with exactly six decimals, appended.
void append_microseconds(std::string& out, engine::Time t) {
    const std::int64_t ps = t.count();
    const std::int64_t mag = ps < 0 ? -ps : ps;
    fmt::format_to(std::back_inserter(out), "{}{}.{:06}", ps < 0 ? "-" : "", mag / 1'000'000, mag % 1'000'000);
}

/// A complete slice ("X" event); `args` the inside of its args object, or empty.
void slice(std::string& out, std::string_view quoted_name, const char* category, std::uint32_t pid, std::uint32_t tid,
           engine::Time from, engine::Time to, std::string_view args) {
    out += ",\n{\"ph\":\"X\",\"name\":";
    out += quoted_name;
    fmt::format_to(std::back_inserter(out), ",\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":", category, pid, tid);
    append_microseconds(out, from);
    out += ",\"dur\":";
    append_microseconds(out, to - from);
    if (!args.empty()) {
        out += ",\"args\":{";
        out += args;
        out += '}';
    }
    out += '}';
}

void op_args(std::string& args, const std::vector<std::string>& quoted_comms, const Op& op, engine::Time contention) {
    args.clear();
    fmt::format_to(std::back_inserter(args), "\"bytes\":{}", op.bytes());
    if (op.kind == OpKind::compute) {
        fmt::format_to(std::back_inserter(args), ",\"class\":\"{}\",\"flops\":", kernel_class_name(op.kernel_class));
        append_json_number(args, op.flops());
    }
    if (op.kind == OpKind::collective) {
        fmt::format_to(std::back_inserter(args),
                       ",\"collective\":\"{}\",\"comm\":", collective_kind_name(op.collective));
        args += quoted_comms[op.comm().index()];
    }
    if (op.kind == OpKind::send || op.kind == OpKind::recv)
        fmt::format_to(std::back_inserter(args), ",\"peer\":{}", op.peer().value);
    if (contention > engine::Time{0}) {
        args += ",\"contention_us\":";
        append_microseconds(args, contention);
    }
}

}  // namespace

std::string microseconds_text(engine::Time t) {
    std::string out;
    append_microseconds(out, t);
    return out;
}

std::string perfetto_json(const OpGraph& g, const Timeline& tl, const PerfettoOptions& options) {
    std::ostringstream text;
    write_perfetto_json(text, g, tl, options);
    return std::move(text).str();
}

void write_perfetto_json(std::ostream& stream, const OpGraph& g, const Timeline& tl, const PerfettoOptions& options) {
    // Built in chunks handed to the stream as they fill: a timeline of tens of millions of ops is gigabytes of
    // text, which must never be held whole (or doubled while a string grows). Values are appended in place, and
    // names and communicators quoted once each.
    std::string out;
    const auto flush_if_full = [&] {
        if (out.size() < (1U << 20)) return;
        stream.write(out.data(), static_cast<std::streamsize>(out.size()));
        out.clear();
    };
    const auto shown = [&](RankId rank) { return options.ranks_shown.empty() || options.ranks_shown[rank.index()]; };
    out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    if (options.ranks_shown.empty()) {
        out += "{\"ph\":\"M\",\"name\":\"clustersim\",\"pid\":0,\"args\":{}}";
    } else {
        // Some ranks only (timeline_ranks.h): the trace says so.
        std::uint32_t ranks_shown = 0;
        for (const std::uint8_t s : options.ranks_shown) ranks_shown += s;
        fmt::format_to(
            std::back_inserter(out),
            "{{\"ph\":\"M\",\"name\":\"clustersim\",\"pid\":0,\"args\":{{\"ranks_shown\":{},\"ranks\":{}}}}}",
            ranks_shown, g.rank_count);
    }
    for (std::uint32_t r = 0; r < g.rank_count; ++r) {
        if (!shown(RankId{r})) continue;
        const std::string label = r < options.rank_labels.size()
                                      ? fmt::format("rank {} ({})", r, options.rank_labels[r])
                                      : fmt::format("rank {}", r);
        out += fmt::format(",\n{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":{}}}}}", r + 1,
                           json_string(label));
        out += fmt::format(
            ",\n{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},\"args\":{{\"sort_index\":{}}}}}", r + 1, r);
    }
    for (std::size_t s = 0; s < g.streams.size(); ++s) {
        if (!shown(g.streams[s].rank)) continue;
        out +=
            fmt::format(",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}",
                        g.streams[s].rank.value + 1, s, json_string(g.streams[s].name));
    }
    std::vector<std::string> quoted_names(g.names.size()), quoted_waits(g.names.size()), quoted_comms;
    for (std::size_t n = 0; n < g.names.size(); ++n) append_json_string(quoted_names[n], g.names[n]);
    for (const Communicator& comm : g.comms) append_json_string(quoted_comms.emplace_back(), comm.name);
    std::string args;
    std::size_t contention_at = 0;  // (ops in ascending order: each contention search starts at the last one found)
    std::size_t wait_at = 0;        // (the same for ready times and starts)
    std::size_t start_at = 0;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        const RankId rank = g.rank_of(op);
        if (!shown(rank)) continue;
        const OpTiming t = tl.timing(OpId::from_index(i), start_at);
        const std::uint32_t pid = rank.value + 1, tid = op.stream.value;
        const engine::Time ready = op.is_communication() ? tl.ready(OpId::from_index(i), wait_at, t.start) : t.start;
        if (t.start > ready) {
            std::string& wait = quoted_waits[op.name];
            if (wait.empty()) append_json_string(wait, "wait: " + g.names[op.name]);
            slice(out, wait, op.kind == OpKind::collective ? "peer_wait" : "dependency_wait", pid, tid, ready, t.start,
                  "");
        }
        const char* category = op.kind == OpKind::compute                                       ? "compute"
                               : op.is_communication()                                          ? "communication"
                               : op.kind == OpKind::memcpy_h2d || op.kind == OpKind::memcpy_d2h ? "copy"
                               : op.kind == OpKind::delay                                       ? "host"
                                                                                                : "memory";
        op_args(args, quoted_comms, op, tl.contention(OpId::from_index(i), contention_at));
        slice(out, quoted_names[op.name], category, pid, tid, t.start, t.end, args);
        flush_if_full();
    }
    for (std::size_t k = 0; k < tl.transfers.size(); ++k) {
        const Transfer& x = tl.transfers[k];
        const Op& send = g.ops[x.send.index()];
        const Op& recv = g.ops[x.recv.index()];
        const RankId send_rank = g.rank_of(send), recv_rank = g.rank_of(recv);
        if (!shown(send_rank) || !shown(recv_rank)) continue;  // (an arrow needs both ends)
        const OpTiming rt = tl.timing(x.recv);
        out += fmt::format(
            ",\n{{\"ph\":\"s\",\"id\":{},\"name\":\"p2p\",\"cat\":\"p2p\",\"pid\":{},\"tid\":{},\"ts\":{}}}", k,
            send_rank.value + 1, send.stream.value, microseconds_text(x.start));
        out += fmt::format(
            ",\n{{\"ph\":\"f\",\"bp\":\"e\",\"id\":{},\"name\":\"p2p\",\"cat\":\"p2p\",\"pid\":{},\"tid\":{},\"ts\":{}}"
            "}",
            k, recv_rank.value + 1, recv.stream.value, microseconds_text(rt.start + (rt.end - rt.start) / 2));
        flush_if_full();
    }
    // Memory held by each rank (alloc/free ops), as a counter track of GiB in the rank's process.
    std::vector<double> held(g.rank_count, 0.0);
    std::size_t memory_start_at = 0;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        if (op.kind != OpKind::alloc && op.kind != OpKind::free) continue;
        const RankId rank = g.rank_of(op);
        if (!shown(rank)) continue;
        double& h = held[rank.index()];
        h += op.kind == OpKind::alloc ? static_cast<double>(op.bytes()) : -static_cast<double>(op.bytes());
        out += fmt::format(",\n{{\"ph\":\"C\",\"name\":\"memory\",\"pid\":{},\"ts\":{},\"args\":{{\"GiB\":{}}}}}",
                           rank.value + 1, microseconds_text(tl.start(OpId::from_index(i), memory_start_at)),
                           json_number(h / (1u << 30)));
        flush_if_full();
    }
    // Busiest links by bytes carried (ties by link order), as counter tracks of GB/s.
    std::vector<std::size_t> busiest = busiest_counters(tl.counters, options.max_link_counters);
    std::sort(busiest.begin(), busiest.end());
    const std::uint32_t network_pid = g.rank_count + 1;
    if (!busiest.empty())
        out += fmt::format(
            ",\n{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":\"network links (GB/s)\"}}}}",
            network_pid);
    for (const std::size_t c : busiest) {
        const CounterSeries& series = tl.counters[c];
        for (const auto& [at, rate] : series.points)
            out += fmt::format(",\n{{\"ph\":\"C\",\"name\":{},\"pid\":{},\"ts\":{},\"args\":{{\"GB/s\":{}}}}}",
                               json_string(series.name), network_pid, microseconds_text(at), json_number(rate / 1e9));
        flush_if_full();
    }
    // Changes to the cluster (system.events): global instant events, drawn across every track, and a process of
    // their own so they can be listed.
    if (!tl.markers.empty()) {
        const std::uint32_t events_pid = g.rank_count + 2;
        out += fmt::format(
            ",\n{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":\"cluster events\"}}}}",
            events_pid);
        for (const TimelineMarker& m : tl.markers)
            out += fmt::format(
                ",\n{{\"ph\":\"i\",\"s\":\"g\",\"name\":{},\"cat\":\"cluster_event\",\"pid\":{},"
                "\"tid\":0,\"ts\":{}}}",
                json_string(m.label), events_pid, microseconds_text(m.at));
    }
    out += "\n]}\n";
    stream.write(out.data(), static_cast<std::streamsize>(out.size()));
}

}  // namespace clustersim::traces
