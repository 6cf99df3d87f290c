// The layers generator's exchanges between workers: DDP's gradient buckets (plain or compressed), gossip rounds
// with peers, and parameter servers (push, aggregate or apply, pull); see layer_builder.h.
#include <fmt/format.h>

#include "engine/units.h"
#include "workloads/layers/layer_builder.h"

namespace clustersim::workloads {

using traces::CollectiveKind;
using traces::OpId;
using traces::OpKind;
using traces::RankId;

double compressed_bytes(const LayerPlan& plan, double bytes) {
    return plan.compression.sent_bytes(bytes, traces::data_type_size(plan.grad_dtype));
}

void LayerBuilder::reduce_bucket(std::uint32_t step, double bytes, OpId after, traces::CommId comm) {
    const std::string name = fmt::format("step{} bucket{}", step, bucket_index_++);
    if (plan_.dp == 1) return;
    if (!plan_.compression.on()) {
        reductions_.push_back(collective(CollectiveKind::all_reduce, bytes, "all-reduce " + name, {after}, comm));
        return;
    }
    // Encode (read the gradients and, with error feedback, the residual; write the message and the residual),
    // send, decode (read what arrived, write the gradients). The decode is queued after the backward's kernels
    // (emit_decodes): as a DDP communication hook's callback, it runs when the exchange completes, behind the
    // kernels already launched, rather than holding the backward up.
    const double sent = compressed_bytes(plan_, bytes);
    const double encode_bytes = plan_.compression.encode_traffic(bytes, sent);
    const OpId encode =
        compute("encode " + name, traces::KernelClass::elementwise, 0, encode_bytes, traces::no_shape, {after});
    const bool gathered = plan_.compression.codec != Codec::lowrank;
    const OpId sent_op = collective(gathered ? CollectiveKind::all_gather : CollectiveKind::all_reduce, sent,
                                    (gathered ? "all-gather " : "all-reduce ") + name, {encode});
    const double received = gathered ? sent * plan_.dp : sent;
    pending_decodes_.push_back({"decode " + name, Compression::decode_traffic(received, bytes), sent_op});
}

void LayerBuilder::emit_decodes() {
    for (const DeferredDecode& d : pending_decodes_)
        reductions_.push_back(
            compute(d.name, traces::KernelClass::elementwise, 0, d.traffic, traces::no_shape, {d.after}));
    pending_decodes_.clear();
}

OpId LayerBuilder::gossip_round(std::uint32_t step, std::uint32_t round, OpId after) {
    const auto& to = sends_[round][rank_.value];
    const auto& from = sources_[round][rank_.value];
    const double params = static_cast<double>(plan_.model.params());
    const double message = compressed_bytes(plan_, 4 * params);  // fp32 parameters
    OpId ready = after;
    if (plan_.compression.on())
        ready = compute(fmt::format("step{} encode parameters", step), traces::KernelClass::elementwise, 0,
                        plan_.compression.encode_traffic(4 * params, message), traces::no_shape, {after});
    std::vector<OpId> exchanged{ready};
    for (const OpKind kind : {OpKind::send, OpKind::recv}) {
        const bool send = kind == OpKind::send;
        const auto& peers = send ? to : from;
        for (std::size_t k = 0; k < peers.size(); ++k) {
            traces::Op op{g_.stream(rank_, fmt::format("gossip {} {}", send ? "send" : "recv", k)),
                          g_.intern(fmt::format("step{} gossip {} rank {}", step, send ? "to" : "from", peers[k])),
                          kind, traces::KernelClass::communication, plan_.grad_dtype};
            op.set_bytes(engine::saturated_bytes(message));
            op.set_comm(p2p_comm_);
            op.set_peer(RankId{peers[k]});
            exchanged.push_back(g_.add(op, std::vector<OpId>{ready}));
        }
    }
    // Mix: read its own parameters and every received message, write its own.
    return compute(fmt::format("step{} gossip mix", step), traces::KernelClass::elementwise, 0,
                   8 * params + message * static_cast<double>(from.size()), traces::no_shape, exchanged);
}

OpId LayerBuilder::p2p(OpKind kind, const std::string& stream, std::uint32_t peer, double bytes,
                       const std::string& name, std::vector<OpId> deps) {
    traces::Op op{g_.stream(rank_, stream), g_.intern(name), kind, traces::KernelClass::communication,
                  plan_.grad_dtype};
    op.set_bytes(engine::saturated_bytes(bytes));
    op.set_comm(p2p_comm_);
    op.set_peer(RankId{peer});
    return g_.add(op, deps);
}

void LayerBuilder::offload_bucket(std::uint32_t step, double bytes, OpId after) {
    // ZeRO-Offload: the bucket's gradients reduce-scattered over the ranks, each rank's part copied to the host,
    // the host's optimizer step on that part, the updated part copied back and all-gathered.
    const double grad_width = traces::data_type_size(plan_.grad_dtype), width = traces::data_type_size(plan_.dtype);
    const double part = bytes / grad_width / plan_.dp;  // parameters of this rank's part
    const std::string name = fmt::format("step{} bucket{}", step, bucket_index_++);
    OpId ready = after;
    if (plan_.dp > 1) ready = collective(CollectiveKind::reduce_scatter, bytes, "reduce-scatter " + name, {after});
    auto copy = [&](OpKind kind, const char* stream, double size, const std::string& what, OpId dep) {
        traces::Op op{g_.stream(rank_, stream), g_.intern(what), kind, traces::KernelClass::other, plan_.dtype};
        op.set_bytes(engine::saturated_bytes(size));
        return g_.add(op, std::vector<OpId>{dep});
    };
    const OpId down = copy(OpKind::memcpy_d2h, "offload d2h", grad_width * part, "gradients to host " + name, ready);
    // The host's optimizer step: fp32 master weights and optimizer state read and written, the gradients read.
    traces::Op cpu{g_.stream(rank_, "host optimizer"), g_.intern("host optimizer " + name), OpKind::delay,
                   traces::KernelClass::optimizer, traces::DataType::fp32};
    const OpId on_host =
        g_.add(cpu, std::vector<OpId>{down},
               engine::from_seconds(part * ((plan_.adam ? 28.0 : 20.0) + grad_width) / plan_.host_bandwidth));
    OpId back = copy(OpKind::memcpy_h2d, "offload h2d", width * part, "parameters to GPU " + name, on_host);
    if (plan_.dp > 1) {
        traces::Op gather{g_.stream(rank_, "offload gather"), g_.intern("all-gather parameters " + name),
                          OpKind::collective, traces::KernelClass::communication, plan_.dtype};
        gather.collective = CollectiveKind::all_gather;
        gather.set_bytes(engine::saturated_bytes(width * part));  // each rank's contribution
        gather.set_comm(world_);
        back = g_.add(gather, std::vector<OpId>{back});
    }
    uploads_.push_back(back);
}

std::vector<OpId> LayerBuilder::push_and_pull(std::uint32_t step, OpId after) {
    // Gradients (dense, or the touched share of a sparse model) to every server, its shard of the parameters back
    // from each.
    const double shard = 4.0 * static_cast<double>(plan_.model.params()) * plan_.sparse_fraction / plan_.servers;
    std::vector<OpId> pulls;
    for (std::uint32_t s = 0; s < plan_.servers; ++s) {
        const std::uint32_t server = plan_.dp + s;
        const OpId push = p2p(OpKind::send, fmt::format("push {}", s), server, shard,
                              fmt::format("step{} push to server {}", step, s), {after});
        pulls.push_back(p2p(OpKind::recv, fmt::format("pull {}", s), server, shard,
                            fmt::format("step{} pull from server {}", step, s), {push}));
    }
    pulls_[step] = pulls;
    switch (plan_.ps_mode) {
        case PsMode::sync:
            return pulls;
        case PsMode::ssp:
            // Step t + 1 may run on parameters up to `staleness` steps old: it waits for the pulls of step
            // t - staleness.
            return step >= plan_.staleness ? pulls_[step - plan_.staleness] : std::vector<OpId>{};
        case PsMode::async:
            return {};
    }
    return pulls;
}

void LayerBuilder::build_server() {
    // Server s holds 1/servers of the parameters and their optimizer state. Sync: each step, all workers' pushes,
    // one update (sum them, then the optimizer), a pull to every worker. Ssp and async: each push applied on its
    // own as it arrives (one update stream per worker), its pull sent back at once.
    const std::uint32_t s = rank_.value - plan_.dp;
    const double params = static_cast<double>(plan_.model.params()) / plan_.servers;
    const double shard = 4.0 * params * plan_.sparse_fraction;
    const double optimizer = params * plan_.sparse_fraction * (plan_.adam ? 28.0 : 20.0);
    memory(OpKind::alloc, traces::MemoryUse::parameters, 4 * params, fmt::format("server {} parameters", s));
    memory(OpKind::alloc, traces::MemoryUse::optimizer_state, (plan_.adam ? 8 : 4) * params,
           fmt::format("server {} optimizer state", s));
    const traces::StreamId own = compute_;
    for (std::uint32_t step = 0; step < plan_.steps; ++step) {
        std::vector<OpId> pushes;
        for (std::uint32_t w = 0; w < plan_.dp; ++w)
            pushes.push_back(p2p(OpKind::recv, fmt::format("push from {}", w), w, shard,
                                 fmt::format("step{} push from worker {}", step, w), {}));
        if (plan_.ps_mode == PsMode::sync) {
            compute_ = own;
            const OpId update =
                compute(fmt::format("step{} aggregate and update", step), traces::KernelClass::optimizer, 0,
                        shard * plan_.dp + optimizer, traces::no_shape, pushes);
            for (std::uint32_t w = 0; w < plan_.dp; ++w)
                p2p(OpKind::send, fmt::format("pull to {}", w), w, shard,
                    fmt::format("step{} pull to worker {}", step, w), {update});
            continue;
        }
        for (std::uint32_t w = 0; w < plan_.dp; ++w) {
            compute_ = g_.stream(rank_, fmt::format("update {}", w));
            const OpId update = compute(fmt::format("step{} apply worker {}", step, w), traces::KernelClass::optimizer,
                                        0, shard + optimizer, traces::no_shape, {pushes[w]});
            p2p(OpKind::send, fmt::format("pull to {}", w), w, shard, fmt::format("step{} pull to worker {}", step, w),
                {update});
        }
    }
    compute_ = own;
}

}  // namespace clustersim::workloads
