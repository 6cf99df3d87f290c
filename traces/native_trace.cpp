// Native trace reading (nlohmann-json DOM, every field checked) and writing (streamed text).
#include "traces/native_trace.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "engine/atomic_file.h"
#include "engine/error.h"
#include "traces/json_text.h"
#include "traces/text_file.h"

namespace clustersim::traces {

namespace {

using nlohmann::json;

class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(const std::string& path, const std::string& message) const {
        throw engine::InputError(engine::SourceLocation{file_, 0, 0, path}, message);
    }
    const json& member(const json& object, const std::string& path, const char* key) const {
        if (!object.is_object()) fail(path, "expected an object");
        const auto it = object.find(key);
        if (it == object.end()) fail(path, fmt::format("missing key '{}'", key));
        return *it;
    }
    /// A non-negative integer no larger than `max` (ids: below 2^32; times and sizes: below 2^62).
    std::uint64_t unsigned_at(const json& v, const std::string& path, std::uint64_t max = id_max) const {
        if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max)
            fail(path, fmt::format("expected an integer from 0 to {}, got {}", max, brief(v)));
        return v.get<std::uint64_t>();
    }
    std::uint32_t id_at(const json& v, const std::string& path) const {
        return static_cast<std::uint32_t>(unsigned_at(v, path, id_max));
    }
    std::string string_at(const json& v, const std::string& path) const {
        if (!v.is_string()) fail(path, fmt::format("expected a string, got {}", brief(v)));
        return v.get<std::string>();
    }
    /// A finite number from 0 to `max`.
    double number_at(const json& v, const std::string& path, double max = 1e30) const {
        if (!v.is_number() || !(v.get<double>() >= 0) || !(v.get<double>() <= max))
            fail(path, fmt::format("expected a number from 0 to {:g}, got {}", max, brief(v)));
        return v.get<double>();
    }
    /// A value for a message, bounded: structured values by their kind and size (never printed recursively, so a
    /// deeply nested value cannot overflow the stack), scalars cut at 200 characters.
    static std::string brief(const json& v) {
        if (v.is_object()) return fmt::format("an object of {} keys", v.size());
        if (v.is_array()) return fmt::format("a list of {} elements", v.size());
        std::string text = v.dump();
        if (text.size() > 200) text = text.substr(0, 200) + "...";
        return text;
    }
    static constexpr std::uint64_t id_max = UINT32_MAX - 1;  // ids index flat arrays; UINT32_MAX is "none"
    static constexpr std::uint64_t quantity_max = std::uint64_t{1} << 62;  // picoseconds (53 days) and bytes
    template <class Enum>
    Enum enum_at(const json& v, const std::string& path, std::optional<Enum> (*parse)(std::string_view),
                 const char* what) const {
        const std::string text = string_at(v, path);
        const auto value = parse(text);
        if (!value) fail(path, fmt::format("unknown {} '{}'", what, text));
        return *value;
    }
    const std::string& file() const { return file_; }

private:
    std::string file_;
};

std::vector<std::uint32_t> unsigned_list(const Reader& r, const json& v, const std::string& path) {
    if (!v.is_array()) r.fail(path, "expected a list of ranks");
    std::vector<std::uint32_t> out;
    for (std::size_t k = 0; k < v.size(); ++k) {
        out.push_back(r.id_at(v[k], fmt::format("{}[{}]", path, k)));
    }
    return out;
}

/// An unknown key is a located error listing the known ones (a typo is never silently ignored).
void expect_keys(const Reader& r, const json& j, const std::string& path, const std::vector<std::string>& allowed) {
    for (const auto& [key, value] : j.items()) {
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
            r.fail(path.empty() ? key : path + "." + key,
                   fmt::format("unknown key '{}' (known: {})", key.substr(0, 80), fmt::join(allowed, ", ")));
    }
}

void read_op(const Reader& r, const json& j, const std::string& path, OpGraph& g, std::vector<OpId>& deps) {
    static const std::vector<std::string> allowed = {
        "id",   "rank",       "stream", "name", "kind", "class",     "dtype", "flops",  "bytes", "duration_ps",
        "deps", "collective", "comm",   "peer", "tag",  "algorithm", "eager", "memory", "gemm"};
    if (!j.is_object()) r.fail(path, "expected an op object");
    expect_keys(r, j, path, allowed);
    Op op;
    if (j.contains("id") && r.unsigned_at(j["id"], path + ".id") != g.ops.size())
        r.fail(path + ".id", fmt::format("ops must be listed in id order: expected id {}", g.ops.size()));
    const RankId rank{r.id_at(r.member(j, path, "rank"), path + ".rank")};
    op.stream = StreamId{r.id_at(r.member(j, path, "stream"), path + ".stream")};
    // (An op's rank is its stream's: said twice in the file, the two must agree. An unknown stream is refused by
    // the validation, naming the op.)
    if (op.stream.index() < g.streams.size() && g.streams[op.stream.index()].rank != rank)
        r.fail(path + ".rank", fmt::format("op on stream {} of rank {} says rank {}", op.stream.value,
                                           g.streams[op.stream.index()].rank.value, rank.value));
    op.name = g.intern(j.contains("name") ? r.string_at(j["name"], path + ".name") : "");
    op.kind = r.enum_at(r.member(j, path, "kind"), path + ".kind", &parse_op_kind, "op kind");
    if (op.is_communication()) op.kernel_class = KernelClass::communication;  // written only for compute ops
    if (j.contains("class"))
        op.kernel_class = r.enum_at(j["class"], path + ".class", &parse_kernel_class, "kernel class");
    if (j.contains("dtype")) op.dtype = r.enum_at(j["dtype"], path + ".dtype", &parse_data_type, "data type");
    // Fields of one family of kinds share their storage in an Op: given to another kind, they are refused.
    const auto only_for = [&](const char* key, bool applies, const char* kinds) {
        if (j.contains(key) && !applies)
            r.fail(path + "." + key,
                   fmt::format("only {} have '{}'; this op is a {}", kinds, key, op_kind_name(op.kind)));
    };
    only_for("flops", op.kind == OpKind::compute, "compute ops");
    only_for("gemm", op.kind == OpKind::compute, "compute ops");
    only_for("algorithm", op.kind == OpKind::collective, "collectives");
    // FLOPs and bytes bounded so that any kernel or message fits the 53 days a run can represent on the slowest
    // GPU and link (docs/formats.md).
    if (j.contains("flops")) op.set_flops(r.number_at(j["flops"], path + ".flops", 1e20));
    if (j.contains("bytes")) op.set_bytes(r.unsigned_at(j["bytes"], path + ".bytes", Op::max_op_bytes));
    engine::Time duration{-1};
    if (j.contains("duration_ps"))
        duration = engine::Time{
            static_cast<std::int64_t>(r.unsigned_at(j["duration_ps"], path + ".duration_ps", Reader::quantity_max))};
    if (op.is_communication()) op.set_comm(CommId{r.id_at(r.member(j, path, "comm"), path + ".comm")});
    if (op.kind == OpKind::collective)
        op.collective =
            r.enum_at(r.member(j, path, "collective"), path + ".collective", &parse_collective_kind, "collective");
    if (op.kind == OpKind::send || op.kind == OpKind::recv) {
        op.set_peer(RankId{r.id_at(r.member(j, path, "peer"), path + ".peer")});
        if (j.contains("tag")) op.set_tag(r.id_at(j["tag"], path + ".tag"));
        if (j.contains("eager")) {
            if (!j["eager"].is_boolean())
                r.fail(path + ".eager", fmt::format("expected true or false, got {}", Reader::brief(j["eager"])));
            op.eager = j["eager"].get<bool>();
        }
    }
    if (j.contains("algorithm")) op.set_algorithm(g.intern(r.string_at(j["algorithm"], path + ".algorithm")));
    if (j.contains("memory")) op.set_memory(r.enum_at(j["memory"], path + ".memory", &parse_memory_use, "memory use"));
    if (j.contains("gemm")) {
        const json& m = j["gemm"];
        if (!m.is_array() || m.size() != 4) r.fail(path + ".gemm", "expected [m, n, k, batch]");
        std::uint32_t dims[4];
        for (std::size_t k = 0; k < 4; ++k) {
            const auto x = r.unsigned_at(m[k], fmt::format("{}.gemm[{}]", path, k));
            if (x < 1 || x > UINT32_MAX)
                r.fail(fmt::format("{}.gemm[{}]", path, k), "expected a dimension from 1 to 2^32-1");
            dims[k] = static_cast<std::uint32_t>(x);
        }
        op.set_shape(g.intern(GemmShape{dims[0], dims[1], dims[2], dims[3]}));
    }
    deps.clear();
    if (j.contains("deps")) {
        const json& d = j["deps"];
        if (!d.is_array()) r.fail(path + ".deps", "expected a list of op ids");
        for (std::size_t k = 0; k < d.size(); ++k) {
            const auto dep = r.unsigned_at(d[k], fmt::format("{}.deps[{}]", path, k));
            if (dep >= g.ops.size())
                r.fail(fmt::format("{}.deps[{}]", path, k),
                       fmt::format("op {} depends on op {}, which is not listed before it", g.ops.size(), dep));
            deps.push_back(OpId{static_cast<std::uint32_t>(dep)});
        }
    }
    g.add(op, deps, duration);
}

}  // namespace

OpGraph parse_native_trace(const std::string& text, const std::string& name) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        throw engine::InputError(engine::SourceLocation{name},
                                 fmt::format("not valid JSON at byte {}: {}", e.byte, e.what()));
    } catch (const json::exception& e) {  // a number beyond a double (1e999...): out_of_range, not a parse_error
        throw engine::InputError(engine::SourceLocation{name},
                                 fmt::format("not a readable JSON document: {}", e.what()));
    }
    const Reader r(name);
    if (!doc.is_object()) r.fail("", "expected a JSON object (a clustersim native trace)");
    expect_keys(r, doc, "",
                {"format", "version", "ranks", "traced_gpu", "job_ranks", "job_size", "training", "traced_iteration_ps",
                 "communicators", "streams", "ops"});
    const std::string format = r.string_at(r.member(doc, "", "format"), "format");
    if (format != "clustersim-trace")
        r.fail("format", fmt::format("expected \"clustersim-trace\", got \"{}\"", format));
    const auto version = r.unsigned_at(r.member(doc, "", "version"), "version");
    if (version != native_trace_version)
        r.fail("version",
               fmt::format("this clustersim reads version {}, the file is version {}", native_trace_version, version));
    OpGraph g;
    g.source = name;
    g.rank_count = static_cast<std::uint32_t>(r.unsigned_at(r.member(doc, "", "ranks"), "ranks", 1u << 24));
    if (doc.contains("traced_gpu")) g.traced_gpu = r.string_at(doc["traced_gpu"], "traced_gpu");
    if (doc.contains("job_ranks")) {
        g.job_ranks = unsigned_list(r, doc["job_ranks"], "job_ranks");
        g.job_rank_count =
            static_cast<std::uint32_t>(r.unsigned_at(r.member(doc, "", "job_size"), "job_size", 1u << 24));
    }
    if (doc.contains("training")) {
        const json& t = doc["training"];
        if (!t.is_object()) r.fail("training", "expected {model_flops, tokens, dtype}");
        expect_keys(r, t, "training", {"model_flops", "tokens", "dtype"});
        g.training.model_flops = r.number_at(r.member(t, "training", "model_flops"), "training.model_flops");
        g.training.tokens = r.number_at(r.member(t, "training", "tokens"), "training.tokens");
        g.training.dtype = r.enum_at(r.member(t, "training", "dtype"), "training.dtype", &parse_data_type, "data type");
    }
    if (doc.contains("traced_iteration_ps"))
        g.traced_iteration = engine::Time{static_cast<std::int64_t>(
            r.unsigned_at(doc["traced_iteration_ps"], "traced_iteration_ps", Reader::quantity_max))};
    const json& comms = r.member(doc, "", "communicators");
    if (!comms.is_array()) r.fail("communicators", "expected a list");
    for (std::size_t i = 0; i < comms.size(); ++i) {
        const std::string path = fmt::format("communicators[{}]", i);
        Communicator c;
        c.name = r.string_at(r.member(comms[i], path, "name"), path + ".name");
        expect_keys(r, comms[i], path, {"name", "ranks", "job_members"});
        const json& ranks = r.member(comms[i], path, "ranks");
        if (!ranks.is_array()) r.fail(path + ".ranks", "expected a list of ranks");
        for (std::size_t k = 0; k < ranks.size(); ++k)
            c.ranks.push_back(RankId{r.id_at(ranks[k], fmt::format("{}.ranks[{}]", path, k))});
        if (comms[i].contains("job_members"))
            c.job_members = unsigned_list(r, comms[i]["job_members"], path + ".job_members");
        g.comms.push_back(std::move(c));
    }
    const json& streams = r.member(doc, "", "streams");
    if (!streams.is_array()) r.fail("streams", "expected a list");
    for (std::size_t i = 0; i < streams.size(); ++i) {
        const std::string path = fmt::format("streams[{}]", i);
        g.streams.push_back(Stream{RankId{r.id_at(r.member(streams[i], path, "rank"), path + ".rank")},
                                   r.string_at(r.member(streams[i], path, "name"), path + ".name")});
        expect_keys(r, streams[i], path, {"rank", "name"});
    }
    const json& ops = r.member(doc, "", "ops");
    if (!ops.is_array()) r.fail("ops", "expected a list");
    g.ops.reserve(ops.size());
    std::vector<OpId> deps;
    for (std::size_t i = 0; i < ops.size(); ++i) read_op(r, ops[i], fmt::format("ops[{}]", i), g, deps);
    validate(g);
    return g;
}

OpGraph read_native_trace(const std::string& path) { return parse_native_trace(read_text_file(path), path); }

std::string native_trace_text(const OpGraph& g) {
    std::string out = fmt::format("{{\"format\": \"clustersim-trace\", \"version\": {}, \"ranks\": {},",
                                  native_trace_version, g.rank_count);
    if (g.traced_iteration.count() >= 0)
        out += fmt::format(" \"traced_iteration_ps\": {},", g.traced_iteration.count());
    if (!g.traced_gpu.empty()) out += fmt::format(" \"traced_gpu\": {},", json_string(g.traced_gpu));
    if (g.training.tokens > 0)
        out += fmt::format(" \"training\": {{\"model_flops\": {}, \"tokens\": {}, \"dtype\": \"{}\"}},",
                           json_number(g.training.model_flops), json_number(g.training.tokens),
                           data_type_name(g.training.dtype));
    if (!g.job_ranks.empty())
        out += fmt::format(" \"job_size\": {}, \"job_ranks\": [{}],", g.job_rank_count, fmt::join(g.job_ranks, ", "));
    out += "\n\"communicators\": [";
    for (std::size_t i = 0; i < g.comms.size(); ++i) {
        out += fmt::format("{}\n  {{\"name\": {}, \"ranks\": [", i ? "," : "", json_string(g.comms[i].name));
        for (std::size_t k = 0; k < g.comms[i].ranks.size(); ++k)
            out += fmt::format("{}{}", k ? ", " : "", g.comms[i].ranks[k].value);
        out += "]";
        if (g.comms[i].folded()) out += fmt::format(", \"job_members\": [{}]", fmt::join(g.comms[i].job_members, ", "));
        out += "}";
    }
    out += "],\n\"streams\": [";
    for (std::size_t i = 0; i < g.streams.size(); ++i)
        out += fmt::format("{}\n  {{\"rank\": {}, \"name\": {}}}", i ? "," : "", g.streams[i].rank.value,
                           json_string(g.streams[i].name));
    out += "],\n\"ops\": [";
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        out += fmt::format("{}\n  {{\"id\": {}, \"rank\": {}, \"stream\": {}, \"name\": {}, \"kind\": \"{}\"",
                           i ? "," : "", i, g.rank_of(op).value, op.stream.value, json_string(g.names[op.name]),
                           op_kind_name(op.kind));
        if (op.kind == OpKind::compute)
            out += fmt::format(", \"class\": \"{}\", \"flops\": {}", kernel_class_name(op.kernel_class),
                               json_number(op.flops()));
        out += fmt::format(", \"dtype\": \"{}\", \"bytes\": {}", data_type_name(op.dtype), op.bytes());
        if (g.has_duration(OpId::from_index(i))) out += fmt::format(", \"duration_ps\": {}", g.durations[i].count());
        if (op.is_communication()) out += fmt::format(", \"comm\": {}", op.comm().value);
        if (op.kind == OpKind::collective)
            out += fmt::format(", \"collective\": \"{}\"", collective_kind_name(op.collective));
        if (op.kind == OpKind::send || op.kind == OpKind::recv)
            out += fmt::format(", \"peer\": {}, \"tag\": {}{}", op.peer().value, op.tag(),
                               op.eager ? ", \"eager\": true" : "");
        if (op.algorithm() != no_algorithm)
            out += fmt::format(", \"algorithm\": {}", json_string(g.names[op.algorithm()]));
        if (op.kind == OpKind::alloc || op.kind == OpKind::free)
            out += fmt::format(", \"memory\": \"{}\"", memory_use_name(op.memory()));
        if (op.shape() != no_shape) {
            const GemmShape& m = g.gemm_shapes[op.shape()];
            out += fmt::format(", \"gemm\": [{}, {}, {}, {}]", m.m, m.n, m.k, m.batch);
        }
        const auto deps = g.deps(OpId::from_index(i));
        if (!deps.empty()) {
            out += ", \"deps\": [";
            for (std::size_t k = 0; k < deps.size(); ++k) out += fmt::format("{}{}", k ? ", " : "", deps[k].value);
            out += "]";
        }
        out += "}";
    }
    out += "]}\n";
    return out;
}

void write_native_trace(const OpGraph& graph, const std::string& path) {
    engine::write_file_atomically(path, native_trace_text(graph));
}

}  // namespace clustersim::traces
