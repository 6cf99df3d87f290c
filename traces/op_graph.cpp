// OpGraph construction helpers and the name tables of its enumerations.
#include "traces/op_graph.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/enum_names.h"
#include "engine/error.h"

namespace clustersim::traces {

namespace {
constexpr engine::NameTable<OpKind, 9> op_kinds = {{{OpKind::compute, "compute"},
                                                    {OpKind::collective, "collective"},
                                                    {OpKind::send, "send"},
                                                    {OpKind::recv, "recv"},
                                                    {OpKind::memcpy_h2d, "memcpy_h2d"},
                                                    {OpKind::memcpy_d2h, "memcpy_d2h"},
                                                    {OpKind::alloc, "alloc"},
                                                    {OpKind::free, "free"},
                                                    {OpKind::delay, "delay"}}};
constexpr engine::NameTable<CollectiveKind, 7> collective_kinds = {{{CollectiveKind::all_reduce, "all_reduce"},
                                                                    {CollectiveKind::reduce_scatter, "reduce_scatter"},
                                                                    {CollectiveKind::all_gather, "all_gather"},
                                                                    {CollectiveKind::broadcast, "broadcast"},
                                                                    {CollectiveKind::reduce, "reduce"},
                                                                    {CollectiveKind::all_to_all, "all_to_all"},
                                                                    {CollectiveKind::barrier, "barrier"}}};
constexpr engine::NameTable<KernelClass, 7> kernel_classes = {{{KernelClass::gemm, "gemm"},
                                                               {KernelClass::attention, "attention"},
                                                               {KernelClass::elementwise, "elementwise"},
                                                               {KernelClass::embedding, "embedding"},
                                                               {KernelClass::optimizer, "optimizer"},
                                                               {KernelClass::communication, "communication"},
                                                               {KernelClass::other, "other"}}};
constexpr engine::NameTable<DataType, 8> data_types = {{{DataType::fp32, "fp32"},
                                                        {DataType::tf32, "tf32"},
                                                        {DataType::fp16, "fp16"},
                                                        {DataType::bf16, "bf16"},
                                                        {DataType::fp8, "fp8"},
                                                        {DataType::int8, "int8"},
                                                        {DataType::int32, "int32"},
                                                        {DataType::int64, "int64"}}};
constexpr engine::NameTable<MemoryUse, memory_use_count> memory_uses = {
    {{MemoryUse::other, "other"},
     {MemoryUse::parameters, "parameters"},
     {MemoryUse::gradients, "gradients"},
     {MemoryUse::optimizer_state, "optimizer_state"},
     {MemoryUse::activations, "activations"},
     {MemoryUse::logits, "logits"},
     {MemoryUse::buffers, "buffers"}}};
}  // namespace

const char* memory_use_name(MemoryUse use) { return engine::enum_name(memory_uses, use); }

std::vector<std::vector<std::vector<OpId>>> collectives_by_member(const OpGraph& g) {
    std::vector<std::vector<std::vector<OpId>>> issued(g.comms.size());  // comm -> member index -> ops
    // Each communicator's (rank, member index) pairs, sorted by rank: a member found by binary search (a scan per
    // op of a world-wide communicator was quadratic in the ranks).
    std::vector<std::vector<std::pair<RankId, std::uint32_t>>> members(g.comms.size());
    for (std::size_t c = 0; c < g.comms.size(); ++c) {
        const auto& ranks = g.comms[c].ranks;
        issued[c].resize(ranks.size());
        members[c].reserve(ranks.size());
        for (std::uint32_t m = 0; m < ranks.size(); ++m) members[c].emplace_back(ranks[m], m);
        std::sort(members[c].begin(), members[c].end());  // (a rank listed twice: its first place, as a scan found)
    }
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        if (op.kind != OpKind::collective || op.comm().index() >= g.comms.size()) continue;
        const auto& index = members[op.comm().index()];
        const RankId rank = g.rank_of(op);
        const auto it = std::lower_bound(index.begin(), index.end(), std::pair{rank, std::uint32_t{0}});
        if (it != index.end() && it->first == rank)
            issued[op.comm().index()][it->second].push_back(OpId::from_index(i));
    }
    return issued;
}
std::optional<MemoryUse> parse_memory_use(std::string_view name) { return engine::enum_from_name(memory_uses, name); }
const char* op_kind_name(OpKind kind) { return engine::enum_name(op_kinds, kind); }
const char* collective_kind_name(CollectiveKind kind) { return engine::enum_name(collective_kinds, kind); }
const char* kernel_class_name(KernelClass kind) { return engine::enum_name(kernel_classes, kind); }
const char* data_type_name(DataType type) { return engine::enum_name(data_types, type); }
std::optional<OpKind> parse_op_kind(std::string_view name) { return engine::enum_from_name(op_kinds, name); }
std::optional<CollectiveKind> parse_collective_kind(std::string_view name) {
    return engine::enum_from_name(collective_kinds, name);
}
std::optional<KernelClass> parse_kernel_class(std::string_view name) {
    return engine::enum_from_name(kernel_classes, name);
}
std::optional<DataType> parse_data_type(std::string_view name) { return engine::enum_from_name(data_types, name); }

int data_type_size(DataType type) {
    switch (type) {
        case DataType::fp32:
        case DataType::tf32:
        case DataType::int32:
            return 4;
        case DataType::fp16:
        case DataType::bf16:
            return 2;
        case DataType::fp8:
        case DataType::int8:
            return 1;
        case DataType::int64:
            return 8;
    }
    return 4;
}

namespace {
std::string stream_key(RankId rank, std::string_view name) {
    std::string key(reinterpret_cast<const char*>(&rank.value), sizeof rank.value);
    key.append(name);
    return key;
}
}  // namespace

StreamId OpGraph::stream(RankId rank, std::string_view name) {
    if (lookup_.streams.size() != streams.size()) {
        lookup_.streams.clear();
        for (std::size_t i = 0; i < streams.size(); ++i)
            lookup_.streams.emplace(stream_key(streams[i].rank, streams[i].name), static_cast<std::uint32_t>(i));
    }
    const auto [it, added] =
        lookup_.streams.emplace(stream_key(rank, name), static_cast<std::uint32_t>(streams.size()));
    if (added) streams.push_back(Stream{rank, std::string(name)});
    return StreamId::from_index(it->second);
}

std::optional<CommId> OpGraph::find_communicator(std::string_view name) {
    if (lookup_.comms.size() != comms.size()) {
        lookup_.comms.clear();
        for (std::size_t i = 0; i < comms.size(); ++i)
            lookup_.comms.emplace(comms[i].name, static_cast<std::uint32_t>(i));
    }
    const auto it = lookup_.comms.find(name);
    if (it == lookup_.comms.end()) return std::nullopt;
    return CommId::from_index(it->second);
}

CommId OpGraph::communicator(std::string_view name, std::vector<RankId> ranks) {
    if (const auto existing = find_communicator(name)) {
        CLUSTERSIM_CHECK(comms[existing->index()].ranks == ranks, "communicator '{}' redefined with other ranks", name);
        return *existing;
    }
    lookup_.comms.emplace(std::string(name), static_cast<std::uint32_t>(comms.size()));
    comms.push_back(Communicator{std::string(name), std::move(ranks)});
    return CommId::from_index(comms.size() - 1);
}

std::uint32_t OpGraph::intern(std::string_view name) {
    if (const auto it = name_index_.find(name); it != name_index_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(names.size());
    names.emplace_back(name);
    name_index_.emplace(std::string(name), id);
    return id;
}

std::uint32_t OpGraph::intern(const GemmShape& shape) {
    for (std::size_t i = 0; i < gemm_shapes.size(); ++i)
        if (gemm_shapes[i] == shape) return static_cast<std::uint32_t>(i);
    gemm_shapes.push_back(shape);
    return static_cast<std::uint32_t>(gemm_shapes.size() - 1);
}

OpId OpGraph::add(const Op& op, std::span<const OpId> deps, engine::Time duration) {
    ops.push_back(op);
    op_deps.append(deps);
    const OpId id = OpId::from_index(ops.size() - 1);
    if (!durations.empty())
        durations.push_back(duration);
    else if (duration.count() >= 0)
        set_duration(id, duration);
    return id;
}

void OpGraph::set_duration(OpId op, engine::Time duration) {
    if (durations.empty()) {
        if (duration.count() < 0) return;
        durations.assign(ops.size(), engine::Time{-1});
    }
    durations[op.index()] = duration;
}

std::uint32_t OpGraph::iteration_of(OpId op) const {
    if (iteration_starts.empty()) return 1;
    const auto after = std::upper_bound(iteration_starts.begin(), iteration_starts.end(), op.value);
    return static_cast<std::uint32_t>(after - iteration_starts.begin());
}

std::string OpGraph::describe(OpId id) const {
    const Op& op = ops[id.index()];
    std::string what = op_kind_name(op.kind);
    if (op.kind == OpKind::collective)
        what = fmt::format("{} on '{}'", collective_kind_name(op.collective),
                           op.comm().index() < comms.size() ? comms[op.comm().index()].name : "?");
    else if (op.kind == OpKind::send)
        what = fmt::format("send to rank {}", op.peer().value);
    else if (op.kind == OpKind::recv)
        what = fmt::format("recv from rank {}", op.peer().value);
    const RankId rank = rank_of(op);
    return fmt::format("rank {} op {} '{}' ({})", rank.valid() ? std::to_string(rank.value) : "?", id.value,
                       op.name < names.size() ? names[op.name] : "?", what);
}

double bus_bandwidth_factor(CollectiveKind kind, std::uint32_t n) {
    const double ranks = n;
    switch (kind) {
        case CollectiveKind::all_reduce:
            return 2 * (ranks - 1) / ranks;
        case CollectiveKind::reduce_scatter:
        case CollectiveKind::all_gather:
        case CollectiveKind::all_to_all:
            return (ranks - 1) / ranks;
        case CollectiveKind::broadcast:
        case CollectiveKind::reduce:
            return 1;
        case CollectiveKind::barrier:
            return 0;
    }
    return 1;
}

}  // namespace clustersim::traces
