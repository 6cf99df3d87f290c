// Trace-event JSON, streamed as text: deterministic bytes, no document in memory.
#include "traces/perfetto_writer.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include <fmt/format.h>

#include "traces/json_text.h"

namespace clustersim::traces {

std::string microseconds_text(engine::Time t) {
    const std::int64_t ps = t.count();
    const std::int64_t mag = ps < 0 ? -ps : ps;
    return fmt::format("{}{}.{:06}", ps < 0 ? "-" : "", mag / 1'000'000, mag % 1'000'000);
}

namespace {

void slice(std::string& out, const std::string& name, const char* category, std::uint32_t pid, std::uint32_t tid,
           engine::Time from, engine::Time to, const std::string& args) {
    out += fmt::format(",\n{{\"ph\":\"X\",\"name\":{},\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{}{}}}",
                       json_string(name), category, pid, tid, microseconds_text(from), microseconds_text(to - from),
                       args.empty() ? "" : ",\"args\":{" + args + "}");
}

std::string op_args(const OpGraph& g, const Op& op, const OpTiming& t) {
    std::string args = fmt::format("\"bytes\":{}", op.bytes);
    if (op.kind == OpKind::compute)
        args +=
            fmt::format(",\"class\":\"{}\",\"flops\":{}", kernel_class_name(op.kernel_class), json_number(op.flops));
    if (op.kind == OpKind::collective)
        args += fmt::format(",\"collective\":\"{}\",\"comm\":{}", collective_kind_name(op.collective),
                            json_string(g.comms[op.comm.index()].name));
    if (op.kind == OpKind::send || op.kind == OpKind::recv) args += fmt::format(",\"peer\":{}", op.peer.value);
    if (t.contention > engine::Time{0}) args += fmt::format(",\"contention_us\":{}", microseconds_text(t.contention));
    return args;
}

}  // namespace

std::string perfetto_json(const OpGraph& g, const Timeline& tl, const PerfettoOptions& options) {
    std::ostringstream text;
    write_perfetto_json(text, g, tl, options);
    return std::move(text).str();
}

void write_perfetto_json(std::ostream& stream, const OpGraph& g, const Timeline& tl, const PerfettoOptions& options) {
    // Built in chunks handed to the stream as they fill: a timeline of tens of millions of ops is gigabytes of
    // text, which must never be held whole (or doubled while a string grows).
    std::string out;
    const auto flush_if_full = [&] {
        if (out.size() < (1U << 20)) return;
        stream.write(out.data(), static_cast<std::streamsize>(out.size()));
        out.clear();
    };
    out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    out += "{\"ph\":\"M\",\"name\":\"clustersim\",\"pid\":0,\"args\":{}}";
    for (std::uint32_t r = 0; r < g.rank_count; ++r) {
        const std::string label = r < options.rank_labels.size()
                                      ? fmt::format("rank {} ({})", r, options.rank_labels[r])
                                      : fmt::format("rank {}", r);
        out += fmt::format(",\n{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":{}}}}}", r + 1,
                           json_string(label));
        out += fmt::format(
            ",\n{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},\"args\":{{\"sort_index\":{}}}}}", r + 1, r);
    }
    for (std::size_t s = 0; s < g.streams.size(); ++s)
        out +=
            fmt::format(",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}",
                        g.streams[s].rank.value + 1, s, json_string(g.streams[s].name));
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        const OpTiming& t = tl.ops[i];
        const std::uint32_t pid = op.rank.value + 1, tid = op.stream.value;
        const std::string& name = g.names[op.name];
        if (op.is_communication() && t.start > t.ready)
            slice(out, "wait: " + name, op.kind == OpKind::collective ? "peer_wait" : "dependency_wait", pid, tid,
                  t.ready, t.start, "");
        const char* category = op.kind == OpKind::compute                                       ? "compute"
                               : op.is_communication()                                          ? "communication"
                               : op.kind == OpKind::memcpy_h2d || op.kind == OpKind::memcpy_d2h ? "copy"
                               : op.kind == OpKind::delay                                       ? "host"
                                                                                                : "memory";
        slice(out, name, category, pid, tid, t.start, t.end, op_args(g, op, t));
        flush_if_full();
    }
    for (std::size_t k = 0; k < tl.transfers.size(); ++k) {
        const Transfer& x = tl.transfers[k];
        const Op& send = g.ops[x.send.index()];
        const Op& recv = g.ops[x.recv.index()];
        const OpTiming& rt = tl.ops[x.recv.index()];
        out += fmt::format(
            ",\n{{\"ph\":\"s\",\"id\":{},\"name\":\"p2p\",\"cat\":\"p2p\",\"pid\":{},\"tid\":{},\"ts\":{}}}", k,
            send.rank.value + 1, send.stream.value, microseconds_text(x.start));
        out += fmt::format(
            ",\n{{\"ph\":\"f\",\"bp\":\"e\",\"id\":{},\"name\":\"p2p\",\"cat\":\"p2p\",\"pid\":{},\"tid\":{},\"ts\":{}}"
            "}",
            k, recv.rank.value + 1, recv.stream.value, microseconds_text(rt.start + (rt.end - rt.start) / 2));
        flush_if_full();
    }
    // Memory held by each rank (alloc/free ops), as a counter track of GiB in the rank's process.
    std::vector<double> held(g.rank_count, 0.0);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        if (op.kind != OpKind::alloc && op.kind != OpKind::free) continue;
        double& h = held[op.rank.index()];
        h += op.kind == OpKind::alloc ? static_cast<double>(op.bytes) : -static_cast<double>(op.bytes);
        out += fmt::format(",\n{{\"ph\":\"C\",\"name\":\"memory\",\"pid\":{},\"ts\":{},\"args\":{{\"GiB\":{}}}}}",
                           op.rank.value + 1, microseconds_text(tl.ops[i].start), json_number(h / (1u << 30)));
        flush_if_full();
    }
    // Busiest links by bytes carried (ties by name), as counter tracks of GB/s.
    std::vector<std::pair<double, std::size_t>> busiest;
    for (std::size_t c = 0; c < tl.counters.size(); ++c) busiest.emplace_back(tl.counters[c].bytes, c);
    std::stable_sort(busiest.begin(), busiest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    if (busiest.size() > options.max_link_counters) busiest.resize(options.max_link_counters);
    std::sort(busiest.begin(), busiest.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    const std::uint32_t network_pid = g.rank_count + 1;
    if (!busiest.empty())
        out += fmt::format(
            ",\n{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":\"network links (GB/s)\"}}}}",
            network_pid);
    for (const auto& [bytes, c] : busiest) {
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
