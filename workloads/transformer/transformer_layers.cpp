// The transformer builder's kernels and messages: one layer's forward and backward (TP/SP collectives, MoE
// all-to-alls, CP ring attention, ZeRO-3 gathers and reduce-scatters), gradient buckets, and the op helpers.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/hash.h"
#include "workloads/transformer/transformer_builder.h"

namespace clustersim::workloads {

using traces::CollectiveKind;
using traces::OpKind;

namespace {
std::uint64_t whole_bytes(double bytes) { return static_cast<std::uint64_t>(std::llround(std::max(0.0, bytes))); }
}  // namespace

std::uint32_t TransformerBuilder::name_id(std::string_view name, std::uint32_t layer) {
    // (The map's one reserved key, all ones, folded onto another: entries are checked by name and layer anyway.)
    const std::uint64_t key = std::min(engine::hash_combine(engine::fnv1a(name), layer), UINT64_MAX - 1);
    bool inserted = false;
    std::uint32_t& entry = named_index_.find_or_insert(key, inserted);
    if (!inserted && entry > 0) {
        const NamedLayer& n = named_[entry - 1];
        if (n.layer == layer && n.name == name) return n.id;
    }
    const std::uint32_t id = g_.intern(layer == UINT32_MAX ? std::string(name) : fmt::format("L{} {}", layer, name));
    if (inserted) {  // (two keys alike: the first keeps the entry, the other is interned in full each time)
        named_.push_back({std::string(name), layer, id});
        entry = static_cast<std::uint32_t>(named_.size());
    }
    return id;
}

std::uint32_t TransformerBuilder::literal_name_id(Literal name, bool recomputing, std::uint32_t layer) {
    const std::uint64_t key =
        (reinterpret_cast<std::uintptr_t>(name.text) ^ (std::uint64_t{layer} << 1) ^ (recomputing ? 1U : 0U)) *
        0x9E3779B97F4A7C15ULL;
    LiteralName& entry = literal_names_[key >> 52];  // (4,096 entries)
    if (entry.text == name.text && entry.layer == layer && entry.recomputing == recomputing) return entry.id;
    const std::uint32_t id =
        recomputing ? name_id(fmt::format("recompute {}", name.text), layer) : name_id(name.text, layer);
    entry = {name.text, layer, recomputing, id};
    return id;
}

traces::OpId TransformerBuilder::compute(Literal name, const KernelCost& cost, std::uint32_t layer, bool recomputing) {
    return compute_id(literal_name_id(name, recomputing, layer), cost);
}

traces::OpId TransformerBuilder::compute_named(std::string_view name, const KernelCost& cost, std::uint32_t layer) {
    return compute_id(name_id(name, layer), cost);
}

traces::OpId TransformerBuilder::compute_id(std::uint32_t name, const KernelCost& cost) {
    traces::Op op{s_.compute, name, OpKind::compute, cost.kernel_class, plan_.dtype};
    op.set_flops(cost.flops);
    op.set_bytes(whole_bytes(cost.bytes));
    if (cost.shape.m > 0) op.set_shape(g_.intern(cost.shape));
    last_compute_ = g_.add(op, pending_);
    pending_.clear();
    return last_compute_;
}

traces::OpId TransformerBuilder::collective(traces::StreamId stream, traces::CommId comm, CollectiveKind kind,
                                            double bytes, const std::string& name, std::span<const OpId> deps) {
    return collective_id(stream, comm, kind, bytes, name_id(name, UINT32_MAX), deps);
}

traces::OpId TransformerBuilder::collective_id(traces::StreamId stream, traces::CommId comm, CollectiveKind kind,
                                               double bytes, std::uint32_t name, std::span<const OpId> deps) {
    traces::Op op{stream, name, OpKind::collective, traces::KernelClass::communication,
                  plan_.dtype == traces::DataType::fp8 ? traces::DataType::bf16 : plan_.dtype};
    op.collective = kind;
    op.set_bytes(whole_bytes(bytes));
    op.set_comm(comm);
    if (stream == s_.compute) {
        pending_.insert(pending_.end(), deps.begin(), deps.end());
        last_compute_ = g_.add(op, pending_);
        pending_.clear();
        return last_compute_;
    }
    return g_.add(op, deps);
}

traces::OpId TransformerBuilder::p2p(OpKind kind, traces::StreamId stream, traces::CommId comm, std::uint32_t peer,
                                     double bytes, const std::string& name, std::span<const OpId> deps) {
    traces::Op op{stream, name_id(name, UINT32_MAX), kind, traces::KernelClass::communication,
                  plan_.dtype == traces::DataType::fp8 ? traces::DataType::bf16 : plan_.dtype};
    op.set_bytes(whole_bytes(bytes));
    op.set_comm(comm);
    op.set_peer(traces::RankId{sim_index_[peer]});  // pipeline and CP peers share the folded coordinates
    return g_.add(op, deps);
}

traces::OpId TransformerBuilder::memory(OpKind kind, traces::MemoryUse use, double bytes, const char* name) {
    traces::Op op{s_.compute, g_.intern(fmt::format("{} {}", kind == OpKind::alloc ? "alloc" : "free", name)), kind,
                  traces::KernelClass::other, plan_.dtype};
    op.set_bytes(whole_bytes(bytes));
    op.set_memory(use);
    return g_.add(op);
}

void TransformerBuilder::tp_collective(CollectiveKind kind, Literal name) {
    if (!comms_[rank_].tp.valid()) return;
    const double buffer = costs_.front().tp_bytes;  // the same for every layer: tokens x hidden
    // all_gather ops carry each rank's contribution; all_reduce and reduce_scatter the whole buffer.
    collective_id(s_.compute, comms_[rank_].tp, kind, kind == CollectiveKind::all_gather ? buffer / plan_.tp : buffer,
                  literal_name_id(name, false, UINT32_MAX));
}

void TransformerBuilder::ep_all_to_all(double bytes, Literal name) {
    if (comms_[rank_].ep.valid())
        collective_id(s_.compute, comms_[rank_].ep, CollectiveKind::all_to_all, bytes,
                      literal_name_id(name, false, UINT32_MAX));
}

void TransformerBuilder::gather_parameters(std::uint32_t layer, double table_params) {
    if (!s_.zero.valid()) return;
    const double e = activation_width(plan_);
    const double shards = double(plan_.cp) * plan_.dp;
    const StageParams p = layer == UINT32_MAX ? StageParams{table_params, 0} : layer_params_on_rank(plan_, layer);
    // Prefetch: the gather may start once the kernel before the previous gather's consumer has run, one layer ahead.
    std::vector<OpId> deps;
    if (layer_first_.valid()) deps.push_back(layer_first_);
    const std::string name =
        layer == UINT32_MAX ? "all-gather embedding/output" : fmt::format("L{} all-gather params", layer);
    pending_.push_back(
        collective(s_.zero, comms_[rank_].dp, CollectiveKind::all_gather, e * p.dense / shards, name, deps));
    if (p.expert > 0 && comms_[rank_].edp.valid()) {
        const OpId expert = collective(s_.zero, comms_[rank_].edp, CollectiveKind::all_gather,
                                       e * p.expert / (shards / plan_.ep), name + " (experts)", deps);
        pending_.push_back(expert);
    }
}

void TransformerBuilder::attention_ring(const KernelCost& whole, double block_bytes, const char* name) {
    // Ring attention over cp ranks: the local block first, then cp - 1 blocks received from the previous rank,
    // each forwarded to the next while the current one is computed.
    KernelCost block = whole;
    block.flops /= plan_.cp;
    block.bytes /= plan_.cp;
    const OpId start = last_compute_;
    OpId received = OpId::invalid();
    for (std::uint32_t j = 0; j < plan_.cp; ++j) {
        if (j + 1 < plan_.cp) {
            const OpId deps[] = {received.valid() ? received : start};
            p2p(OpKind::send, s_.cp_send, comms_[rank_].cp, cp_next_[rank_], block_bytes,
                fmt::format("{} kv send", name), deps);
            const OpId next = p2p(OpKind::recv, s_.cp_recv, comms_[rank_].cp, cp_prev_[rank_], block_bytes,
                                  fmt::format("{} kv recv", name), deps);
            if (received.valid()) pending_.push_back(received);
            compute_named(fmt::format("{} block", name), block, UINT32_MAX);
            received = next;
        } else {
            if (received.valid()) pending_.push_back(received);
            compute_named(fmt::format("{} block", name), block, UINT32_MAX);
        }
    }
}

void TransformerBuilder::forward_layer(std::uint32_t l, bool recomputing) {
    const LayerCosts& c = costs_[l];
    if (plan_.zero_stage == 3 && !recomputing) gather_parameters(l);
    const OpId first = compute("norm", c.norm, l, recomputing);
    if (!recomputing) layer_first_ = first;
    if (plan_.sequence_parallel) tp_collective(CollectiveKind::all_gather, "tp all-gather");
    compute("qkv", c.qkv, l, recomputing);
    if (plan_.cp > 1)
        attention_ring(c.attention, c.kv_block_bytes, "attention");
    else
        compute("attention", c.attention, l, recomputing);
    compute("projection", c.projection, l, recomputing);
    tp_collective(plan_.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce,
                  plan_.sequence_parallel ? Literal("tp reduce-scatter") : Literal("tp all-reduce"));
    compute("residual", c.residual, l, recomputing);
    compute("norm", c.norm, l, recomputing);
    if (!c.moe) {
        if (plan_.sequence_parallel) tp_collective(CollectiveKind::all_gather, "tp all-gather");
        compute("mlp in", c.mlp_in, l, recomputing);
        compute("activation", c.activation, l, recomputing);
        compute("mlp out", c.mlp_out, l, recomputing);
        tp_collective(plan_.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce,
                      plan_.sequence_parallel ? Literal("tp reduce-scatter") : Literal("tp all-reduce"));
    } else {
        compute("router", c.router, l, recomputing);
        ep_all_to_all(c.all_to_all_bytes, "ep dispatch");
        compute("experts in", c.expert_in, l, recomputing);
        compute("experts activation", c.expert_activation, l, recomputing);
        compute("experts out", c.expert_out, l, recomputing);
        ep_all_to_all(c.all_to_all_bytes, "ep combine");
        if (c.shared_in.flops > 0) {
            compute("shared expert in", c.shared_in, l, recomputing);
            compute("shared expert out", c.shared_out, l, recomputing);
        }
    }
    compute("residual", c.residual, l, recomputing);
}

void TransformerBuilder::backward_layer(std::uint32_t l, bool reduce_gradients) {
    const LayerCosts& c = costs_[l];
    if (plan_.recompute == Recompute::full) forward_layer(l, true);
    if (plan_.zero_stage == 3) gather_parameters(l);
    const auto sp_or_ar = plan_.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
    const Literal tp_name = plan_.sequence_parallel ? Literal("tp reduce-scatter") : Literal("tp all-reduce");
    layer_first_ = compute("residual backward", backward_of(c.residual), l);
    if (!c.moe) {
        if (plan_.sequence_parallel) tp_collective(CollectiveKind::all_gather, "tp all-gather");
        compute("mlp out backward", backward_of(c.mlp_out), l);
        compute("activation backward", backward_of(c.activation), l);
        compute("mlp in backward", backward_of(c.mlp_in), l);
        tp_collective(sp_or_ar, tp_name);
    } else {
        if (c.shared_in.flops > 0) {
            compute("shared expert out backward", backward_of(c.shared_out), l);
            compute("shared expert in backward", backward_of(c.shared_in), l);
        }
        ep_all_to_all(c.all_to_all_bytes, "ep combine backward");
        compute("experts out backward", backward_of(c.expert_out), l);
        compute("experts activation backward", backward_of(c.expert_activation), l);
        compute("experts in backward", backward_of(c.expert_in), l);
        ep_all_to_all(c.all_to_all_bytes, "ep dispatch backward");
        compute("router backward", backward_of(c.router), l);
    }
    compute("norm backward", backward_of(c.norm), l);
    compute("residual backward", backward_of(c.residual), l);
    if (plan_.sequence_parallel) tp_collective(CollectiveKind::all_gather, "tp all-gather");
    compute("projection backward", backward_of(c.projection), l);
    if (plan_.recompute == Recompute::selective) {
        if (plan_.cp > 1)
            attention_ring(c.attention, c.kv_block_bytes, "recompute attention");
        else
            compute("recompute attention", c.attention, l);
    }
    if (plan_.cp > 1)
        attention_ring(backward_of(c.attention), 2 * c.kv_block_bytes, "attention backward");
    else
        compute("attention backward", backward_of(c.attention), l);
    compute("qkv backward", backward_of(c.qkv), l);
    tp_collective(sp_or_ar, tp_name);
    compute("norm backward", backward_of(c.norm), l);

    const StageParams p = layer_params_on_rank(plan_, l);
    const double e = activation_width(plan_);
    if (plan_.zero_stage == 3) {
        // Gradients of the layer reduce-scattered to their owners right away, every micro-batch.
        const OpId deps[] = {last_compute_};
        if (comms_[rank_].dp.valid())
            last_dp_ = collective(s_.dp, comms_[rank_].dp, CollectiveKind::reduce_scatter, e * p.dense,
                                  fmt::format("L{} reduce-scatter grads", l), deps);
        if (p.expert > 0 && comms_[rank_].edp.valid())
            last_dp_ = collective(s_.dp, comms_[rank_].edp, CollectiveKind::reduce_scatter, e * p.expert,
                                  fmt::format("L{} reduce-scatter expert grads", l), deps);
        return;
    }
    if (!reduce_gradients) return;
    bucket_.dense_bytes += e * p.dense;
    bucket_.expert_bytes += e * p.expert;
    if (bucket_.dense_bytes + bucket_.expert_bytes >= double(plan_.grad_bucket_bytes)) reduce_bucket();
}

void TransformerBuilder::reduce_bucket() {
    if (!s_.dp.valid()) {
        bucket_ = {};
        return;
    }
    const OpId deps[] = {last_compute_};
    const auto kind = plan_.zero_stage >= 1 ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
    const char* what = plan_.zero_stage >= 1 ? "reduce-scatter" : "all-reduce";
    if (plan_.dp_compression.on()) {
        if (bucket_.dense_bytes > 0 && comms_[rank_].dp.valid())
            reduce_gradients(comms_[rank_].dp, bucket_.dense_bytes, "dp");
        if (bucket_.expert_bytes > 0 && comms_[rank_].edp.valid())
            reduce_gradients(comms_[rank_].edp, bucket_.expert_bytes, "edp expert");
        bucket_ = {};
        return;
    }
    if (bucket_.dense_bytes > 0 && comms_[rank_].dp.valid())
        last_dp_ =
            collective(s_.dp, comms_[rank_].dp, kind, bucket_.dense_bytes, fmt::format("dp {} grads", what), deps);
    if (bucket_.expert_bytes > 0 && comms_[rank_].edp.valid())
        last_dp_ = collective(s_.dp, comms_[rank_].edp, kind, bucket_.expert_bytes,
                              fmt::format("edp {} expert grads", what), deps);
    bucket_ = {};
}

void TransformerBuilder::reduce_gradients(traces::CommId comm, double bytes, const std::string& what) {
    // Encode on the compute stream as the bucket closes (the kernels waiting for it keep their dependencies), send
    // (top-k and quantized messages cannot be summed in flight: all-gathered), decode after the backward.
    const Compression& c = plan_.dp_compression;
    const double sent = c.sent_bytes(bytes, activation_width(plan_));
    std::vector<OpId> held;
    held.swap(pending_);
    const OpId encode =
        compute_named(fmt::format("encode {} grads", what), KernelCost{0, c.encode_traffic(bytes, sent)}, UINT32_MAX);
    pending_.swap(held);
    const bool gathered = c.codec != Codec::lowrank;
    const OpId deps[] = {encode};
    last_dp_ = collective(s_.dp, comm, gathered ? CollectiveKind::all_gather : CollectiveKind::all_reduce, sent,
                          fmt::format("dp {} {} grads", gathered ? "all-gather" : "all-reduce", what), deps);
    const traces::Communicator& group = g_.comms[comm.index()];
    const double members = static_cast<double>(group.folded() ? group.job_members.size() : group.ranks.size());
    pending_decodes_.push_back({fmt::format("decode {} grads", what),
                                Compression::decode_traffic(gathered ? sent * members : sent, bytes), last_dp_});
}

void TransformerBuilder::emit_decodes() {
    for (const DeferredDecode& d : pending_decodes_) {
        pending_.push_back(d.after);
        compute_named(d.name, KernelCost{0, d.traffic}, UINT32_MAX);
    }
    pending_decodes_.clear();
}

}  // namespace clustersim::workloads
