// Chakra import. Each node becomes an op of its rank: COMP nodes (their duration_micros) on stream "compute"
// (CPU ops, is_cpu_op, as host delays), COMM_COLL on "comm", COMM_SEND on "send", COMM_RECV on "recv", and
// metadata / memory nodes as zero-time ops that keep their dependencies. data_deps and ctrl_deps become deps
// (dependencies on nodes absent from the file are ignored, with a warning);
// ops are ordered by a topological sort (ties by node id) so that stream order never contradicts them.
#include "traces/formats/chakra_reader.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <queue>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <spdlog/spdlog.h>

#include "engine/error.h"
#include "engine/log.h"
#include "traces/formats/chakra/chakra_et.pb.h"
#include "traces/text_file.h"

namespace clustersim::traces {

namespace {

[[noreturn]] void reject(const std::string& file, const std::string& what) {
    throw engine::InputError(engine::SourceLocation{file}, what);
}

/// An integer attribute of a node, range-checked into int64 (a uint64 beyond 2^63 or a non-finite or fractional
/// double is a located error, never a wrapped value).
std::optional<std::int64_t> integer_attr(const chakra::Node& node, const std::string& name, const std::string& file) {
    auto out_of_range = [&](const std::string& value) {
        reject(file, fmt::format("node {} '{}': attribute '{}' {} is out of range (expected an integer below 2^63)",
                                 node.id(), node.name().substr(0, 80), name, value));
    };
    auto from_double = [&](double v) -> std::int64_t {
        if (!(v >= -9.2e18 && v <= 9.2e18) || v != static_cast<double>(static_cast<std::int64_t>(v)))
            out_of_range(fmt::format("{}", v));
        return static_cast<std::int64_t>(v);
    };
    for (const auto& a : node.attr()) {
        if (a.name() != name) continue;
        switch (a.value_case()) {
            case chakra::AttributeProto::kInt64Val:
                return a.int64_val();
            case chakra::AttributeProto::kInt32Val:
                return a.int32_val();
            case chakra::AttributeProto::kUint64Val:
                if (a.uint64_val() > static_cast<std::uint64_t>(INT64_MAX))
                    out_of_range(std::to_string(a.uint64_val()));
                return static_cast<std::int64_t>(a.uint64_val());
            case chakra::AttributeProto::kUint32Val:
                return a.uint32_val();
            case chakra::AttributeProto::kSint32Val:
                return a.sint32_val();
            case chakra::AttributeProto::kSint64Val:
                return a.sint64_val();
            case chakra::AttributeProto::kFixed32Val:
                return a.fixed32_val();
            case chakra::AttributeProto::kFixed64Val:
                if (a.fixed64_val() > static_cast<std::uint64_t>(INT64_MAX))
                    out_of_range(std::to_string(a.fixed64_val()));
                return static_cast<std::int64_t>(a.fixed64_val());
            case chakra::AttributeProto::kSfixed32Val:
                return a.sfixed32_val();
            case chakra::AttributeProto::kSfixed64Val:
                return a.sfixed64_val();
            case chakra::AttributeProto::kBoolVal:
                return a.bool_val() ? 1 : 0;
            case chakra::AttributeProto::kDoubleVal:
                return from_double(a.double_val());
            case chakra::AttributeProto::kFloatVal:
                return from_double(a.float_val());
            default:
                return std::nullopt;
        }
    }
    return std::nullopt;
}

/// A node's comm_size in bytes: 0 when absent; negative or beyond what an op holds (2^48 - 2) is a located error.
std::uint64_t comm_size(const chakra::Node& node, const std::string& file) {
    const std::int64_t size = integer_attr(node, "comm_size", file).value_or(0);
    if (size < 0 || size > static_cast<std::int64_t>(Op::max_op_bytes))
        reject(file, fmt::format("node {} '{}': comm_size {} is out of range (expected 0 to 2^48 - 2 bytes)", node.id(),
                                 node.name().substr(0, 80), size));
    return static_cast<std::uint64_t>(size);
}

/// A COMP node's duration: beyond 1e11 us (about 28 hours) a run's picosecond times cannot represent it.
engine::Time duration_of(const chakra::Node& node, const std::string& file) {
    constexpr std::uint64_t max_us = 100'000'000'000ULL;
    if (node.duration_micros() > max_us)
        reject(file, fmt::format("node {} '{}': duration_micros {} is out of range (expected 0 to 1e11 us)", node.id(),
                                 node.name().substr(0, 80), node.duration_micros()));
    return engine::Time{static_cast<std::int64_t>(node.duration_micros()) * 1'000'000};
}

std::vector<chakra::Node> read_nodes(const std::string& file) {
    const std::string data = read_text_file(file);
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(data.data()),
                                              static_cast<int>(data.size()));
    in.SetTotalBytesLimit(INT32_MAX);
    std::vector<chakra::Node> nodes;
    bool metadata = true;
    while (in.CurrentPosition() < static_cast<int>(data.size())) {
        const int at = in.CurrentPosition();
        std::uint32_t size = 0;
        if (!in.ReadVarint32(&size) || size > data.size())
            reject(file, fmt::format("byte {}: expected the varint length of a message", at));
        const auto limit = in.PushLimit(static_cast<int>(size));
        if (metadata) {
            chakra::GlobalMetadata meta;
            if (!meta.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
                reject(
                    file,
                    fmt::format(
                        "byte {}: expected a Chakra GlobalMetadata message of {} bytes (truncated or not a .et file?)",
                        at, size));
            metadata = false;
        } else {
            chakra::Node node;
            if (!node.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
                reject(file, fmt::format("byte {}: expected a Chakra Node message of {} bytes (truncated?)", at, size));
            nodes.push_back(std::move(node));
        }
        in.PopLimit(limit);
    }
    return nodes;
}

CollectiveKind collective_of(std::int64_t type, const std::string& file, const chakra::Node& node) {
    switch (static_cast<chakra::CollectiveCommType>(type)) {
        case chakra::ALL_REDUCE:
            return CollectiveKind::all_reduce;
        case chakra::REDUCE:
            return CollectiveKind::reduce;
        case chakra::ALL_GATHER:
        case chakra::GATHER:
            return CollectiveKind::all_gather;
        case chakra::BROADCAST:
        case chakra::SCATTER:
            return CollectiveKind::broadcast;
        case chakra::ALL_TO_ALL:
            return CollectiveKind::all_to_all;
        case chakra::REDUCE_SCATTER:
        case chakra::REDUCE_SCATTER_BLOCK:
            return CollectiveKind::reduce_scatter;
        case chakra::BARRIER:
            return CollectiveKind::barrier;
        default:
            reject(file, fmt::format("node {} '{}': unknown comm_type {}", node.id(), node.name(), type));
    }
}

}  // namespace

bool looks_like_chakra(const std::string& text) {
    // A GlobalMetadata first: a varint length (up to 4 bytes), then field 1 (version) or 2 (attr), both
    // length-delimited: tag 0x0a or 0x12.
    std::size_t i = 0;
    while (i < 4 && i < text.size() && (static_cast<unsigned char>(text[i]) & 0x80)) ++i;
    ++i;
    return i < text.size() && (text[i] == '\x0a' || text[i] == '\x12') && text.find("traceEvents") == std::string::npos;
}

namespace {
// The rank in a Chakra file's name, PREFIX.RANK.et (optionally .gz): the last run of digits before the suffix.
std::optional<std::uint64_t> rank_in_name(const std::string& path) {
    std::string name = std::filesystem::path(path).filename().string();
    for (const char* suffix : {".gz", ".et"})
        if (name.size() > std::strlen(suffix) &&
            name.compare(name.size() - std::strlen(suffix), std::string::npos, suffix) == 0)
            name.resize(name.size() - std::strlen(suffix));
    std::size_t end = name.size();
    while (end > 0 && !std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
    std::size_t begin = end;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(name[begin - 1]))) --begin;
    if (begin == end || end - begin > 9) return std::nullopt;
    return std::stoull(name.substr(begin, end - begin));
}

// Files in rank order: by the rank in their names when every name has a distinct one (a shell glob gives rank 10
// before rank 2), else as given.
std::vector<std::string> in_rank_order(const std::vector<std::string>& files) {
    std::vector<std::pair<std::uint64_t, std::string>> ranked;
    for (const auto& f : files) {
        const auto r = rank_in_name(f);
        if (!r) return files;
        ranked.emplace_back(*r, f);
    }
    std::sort(ranked.begin(), ranked.end());
    for (std::size_t k = 1; k < ranked.size(); ++k)
        if (ranked[k].first == ranked[k - 1].first) return files;
    std::vector<std::string> out;
    for (auto& [r, f] : ranked) out.push_back(std::move(f));
    return out;
}
}  // namespace

OpGraph read_chakra(const std::vector<std::string>& given) {
    if (given.empty()) throw engine::InputError("no trace files given");
    const std::vector<std::string> files = in_rank_order(given);
    OpGraph g;
    g.rank_count = static_cast<std::uint32_t>(files.size());
    g.source = files.size() == 1 ? files.front() : fmt::format("{} and {} more", files.front(), files.size() - 1);
    std::vector<RankId> world;
    for (std::uint32_t r = 0; r < g.rank_count; ++r) world.push_back(RankId{r});
    for (std::uint32_t r = 0; r < files.size(); ++r) {
        const std::string& file = files[r];
        const auto nodes = read_nodes(file);
        if (nodes.empty()) reject(file, "no Chakra nodes after the metadata: an empty trace has nothing to replay");
        std::map<std::uint64_t, std::size_t> index;  // node id -> position
        std::size_t missing = 0;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            if (!index.emplace(nodes[i].id(), i).second)
                reject(file, fmt::format("node id {} appears twice", nodes[i].id()));
        }
        // Dependencies (positions), without unknown nodes and self-references; ctrl_deps too unless they make a
        // cycle (in some converter versions they encode the CPU call tree), in which case data_deps alone.
        auto dependency_lists = [&](bool with_ctrl) {
            std::vector<std::vector<std::size_t>> lists(nodes.size());
            missing = 0;
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                for (const auto* deps : {&nodes[i].data_deps(), &nodes[i].ctrl_deps()}) {
                    if (deps == &nodes[i].ctrl_deps() && !with_ctrl) continue;
                    for (const std::uint64_t d : *deps) {
                        const auto it = index.find(d);
                        if (it == index.end()) {
                            ++missing;  // traces often name pruned nodes (CPU ops, process-group setup)
                            continue;
                        }
                        if (it->second != i) lists[i].push_back(it->second);  // self-references occur in real traces
                    }
                }
                std::sort(lists[i].begin(), lists[i].end());
                lists[i].erase(std::unique(lists[i].begin(), lists[i].end()), lists[i].end());
            }
            return lists;
        };
        auto acyclic = [&](const std::vector<std::vector<std::size_t>>& lists) {
            std::vector<std::uint32_t> indegree(nodes.size(), 0);
            std::vector<std::vector<std::size_t>> out(nodes.size());
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                for (const std::size_t d : lists[i]) {
                    out[d].push_back(i);
                    ++indegree[i];
                }
            }
            std::vector<std::size_t> stack;
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                if (indegree[i] == 0) stack.push_back(i);
            }
            std::size_t seen = 0;
            while (!stack.empty()) {
                const std::size_t i = stack.back();
                stack.pop_back();
                ++seen;
                for (const std::size_t k : out[i]) {
                    if (--indegree[k] == 0) stack.push_back(k);
                }
            }
            return seen == nodes.size();
        };
        auto lists = dependency_lists(true);
        if (!acyclic(lists)) {
            lists = dependency_lists(false);
            if (!acyclic(lists)) reject(file, "the nodes' data dependencies form a cycle");
            engine::layer_log("traces").warn("{}: ctrl_deps form cycles; using data_deps only", file);
        }
        // Topological order, lowest node id first among the ready ones.
        std::vector<std::vector<std::size_t>> dependents(nodes.size());
        std::vector<std::uint32_t> waiting(nodes.size(), 0);
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            for (const std::size_t d : lists[i]) {
                dependents[d].push_back(i);
                ++waiting[i];
            }
        }
        using Ready = std::pair<std::uint64_t, std::size_t>;
        std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            if (waiting[i] == 0) ready.emplace(nodes[i].id(), i);
        }
        std::vector<OpId> op_of(nodes.size(), OpId::invalid());
        const RankId rank{r};
        std::size_t placed = 0;
        while (!ready.empty()) {
            const std::size_t i = ready.top().second;
            ready.pop();
            ++placed;
            const chakra::Node& n = nodes[i];
            Op op{StreamId{}, g.intern(n.name())};
            engine::Time duration{-1};
            switch (n.type()) {
                case chakra::COMP_NODE:
                    op.kind = integer_attr(n, "is_cpu_op", file).value_or(0) ? OpKind::delay : OpKind::compute;
                    duration = duration_of(n, file);
                    op.stream = g.stream(rank, op.kind == OpKind::delay ? "cpu" : "compute");
                    break;
                case chakra::COMM_COLL_NODE:
                    op.kind = OpKind::collective;
                    op.kernel_class = KernelClass::communication;  // as every reader files communication
                    op.collective = collective_of(integer_attr(n, "comm_type", file).value_or(0), file, n);
                    op.set_bytes(comm_size(n, file));
                    op.set_comm(g.communicator("world", world));
                    op.stream = g.stream(rank, "comm");
                    break;
                case chakra::COMM_SEND_NODE:
                case chakra::COMM_RECV_NODE: {
                    const bool send = n.type() == chakra::COMM_SEND_NODE;
                    const auto peer = integer_attr(n, send ? "comm_dst" : "comm_src", file);
                    if (!peer || *peer < 0 || *peer >= static_cast<std::int64_t>(g.rank_count))
                        reject(file, fmt::format("node {} '{}': {} names no rank of the {} given", n.id(), n.name(),
                                                 send ? "comm_dst" : "comm_src", g.rank_count));
                    op.kind = send ? OpKind::send : OpKind::recv;
                    op.kernel_class = KernelClass::communication;
                    op.eager = send;  // Chakra sends are buffered: they go without waiting for the recv
                    op.set_peer(RankId{static_cast<std::uint32_t>(*peer)});
                    const std::int64_t tag = integer_attr(n, "comm_tag", file).value_or(0);
                    if (tag < 0 || tag > UINT32_MAX)
                        reject(file, fmt::format("node {} '{}': comm_tag {} is out of range (expected 0 to 2^32-1)",
                                                 n.id(), n.name().substr(0, 80), tag));
                    op.set_tag(static_cast<std::uint32_t>(tag));
                    op.set_bytes(comm_size(n, file));
                    const std::uint32_t lo = std::min(r, op.peer().value), hi = std::max(r, op.peer().value);
                    op.set_comm(g.communicator(fmt::format("p2p.{}-{}", lo, hi), {RankId{lo}, RankId{hi}}));
                    op.stream = g.stream(rank, send ? "send" : "recv");
                    break;
                }
                case chakra::METADATA_NODE:
                case chakra::MEM_LOAD_NODE:
                case chakra::MEM_STORE_NODE:
                    op.kind = OpKind::alloc;
                    op.stream = g.stream(rank, "compute");
                    break;
                default:
                    reject(file, fmt::format("node {} '{}': unknown node type {}", n.id(), n.name(),
                                             static_cast<int>(n.type())));
            }
            std::vector<OpId> deps;
            for (const std::size_t d : lists[i]) deps.push_back(op_of[d]);
            op_of[i] = g.add(op, deps, duration);
            for (const std::size_t d : dependents[i]) {
                if (--waiting[d] == 0) ready.emplace(nodes[d].id(), d);
            }
        }
        if (missing > 0)
            engine::layer_log("traces").warn("{}: {} dependencies on nodes not in the trace were ignored", file,
                                             missing);
    }
    validate(g);
    return g;
}

}  // namespace clustersim::traces
