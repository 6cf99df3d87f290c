// The pipeline generator: a transformer whose layers are split over `pp` stages (and, with `virtual_stages`,
// over that many model chunks per stage: Megatron's interleaved schedule), run with a GPipe or 1F1B schedule over
// `microbatches` micro-batches, and replicated `dp` times. Rank = replica * pp + stage, so the
// stages of a replica sit side by side (on one node's NVLink when pp divides the GPUs per node) and each
// data-parallel group spans the replicas.
//
// Per rank: stream "compute" runs forwards and backwards in schedule order; stream "recv" posts receives (each
// when the schedule reaches its step, so no receive kernel sits resident from t = 0) and
// stream "send" posts sends, each in the order the schedule needs them (NCCL send/recv are rendezvous); stream
// "dp" all-reduces each layer's gradients as soon as the last micro-batch's backward of that layer is done,
// overlapping the backward of the layers before it (as Megatron's overlapped gradient reduction does).
// FLOPs per layer and micro-batch: forward 24·b·s·h² + 4·b·s²·h (QKV 6bsh², projection 2bsh², MLP 16bsh², QKᵀ and AV
// 4bs²h), backward twice that.
#include <fmt/format.h>

#include "engine/memory_budget.h"
#include "engine/units.h"

#include "traces/pipeline_schedule.h"
#include "workloads/compression.h"
#include "workloads/workload_registry.h"

namespace clustersim::workloads {

using traces::OpGraph;
using traces::OpId;
using traces::OpKind;
using traces::RankId;

namespace {

struct Shape {
    std::uint32_t pp = 1, dp = 1, microbatches = 1, layers = 1, chunks = 1;
    bool one_f_one_b = true;
    double hidden = 0, seq = 0, batch = 0;
    traces::DataType dtype = traces::DataType::bf16;
    engine::Time forward_time{-1}, backward_time{-1};
    bool optimizer = true;
    StageCompression compression;  // of the messages between stages
};

std::uint32_t positive(const engine::Params& p, const char* name, std::int64_t max) {
    const auto v = p.integer(name);
    if (v < 1 || v > max) p.fail(name, fmt::format("expected an integer from 1 to {}, got {}", max, v));
    return static_cast<std::uint32_t>(v);
}

Shape read_shape(const engine::Params& p) {
    Shape s;
    s.pp = positive(p, "pp", 1 << 16);
    s.dp = positive(p, "dp", 1 << 16);
    s.microbatches = positive(p, "microbatches", 1 << 16);
    s.layers = positive(p, "layers_per_stage", 1 << 12);
    const std::string& schedule = p.string("schedule");
    if (schedule != "gpipe" && schedule != "1f1b")
        p.fail("schedule", fmt::format("unknown schedule '{}' (known: gpipe, 1f1b)", schedule));
    s.one_f_one_b = schedule == "1f1b";
    s.chunks = positive(p, "virtual_stages", 1 << 10);
    if (s.layers % s.chunks != 0)
        p.fail("virtual_stages",
               fmt::format("{} layers per stage do not split into {} model chunks", s.layers, s.chunks));
    if (s.chunks > 1 && s.microbatches % s.pp != 0)
        p.fail("virtual_stages",
               fmt::format("interleaving needs the micro-batches ({}) in groups of pp ({})", s.microbatches, s.pp));
    s.hidden = static_cast<double>(positive(p, "hidden", 1 << 20));
    s.seq = static_cast<double>(positive(p, "seq_len", 1 << 24));
    s.batch = static_cast<double>(positive(p, "micro_batch_size", 1 << 16));
    const auto dtype = traces::parse_data_type(p.string("dtype"));
    if (!dtype) p.fail("dtype", fmt::format("unknown datatype '{}'", p.string("dtype")));
    s.dtype = *dtype;
    if (!p.string("forward_time").empty())
        s.forward_time = engine::parse_time(p.string("forward_time"), p.location("forward_time"));
    if (!p.string("backward_time").empty())
        s.backward_time = engine::parse_time(p.string("backward_time"), p.location("backward_time"));
    s.optimizer = p.boolean("optimizer");
    s.compression = read_stage_compression(p, s.pp);
    return s;
}

}  // namespace

std::uint64_t pipeline_data_parallel_ranks(const engine::Params& params) {
    const Shape s = read_shape(params);
    return std::uint64_t{s.pp} * s.dp;
}

OpGraph build_pipeline_data_parallel(const engine::Params& params) {
    const Shape s = read_shape(params);
    // What the graph needs before building it: per rank and micro-batch, a forward and a backward per layer and
    // chunk and four transfers; about 200 bytes per op.
    const double ops = double(s.pp) * s.dp * (double(s.microbatches) * (2.0 * s.layers + 4.0) + 2.0 * s.layers + 2.0);
    engine::require_memory(ops * 200.0, fmt::format("the pipeline plan ({:.3g} ops)", ops),
                           "fewer microbatches, layers_per_stage, pp or dp", params.location("pp").file);
    OpGraph g;
    g.rank_count = s.pp * s.dp;
    g.source = fmt::format("pipeline generator (pp={}, dp={}, {} micro-batches, {}{})", s.pp, s.dp, s.microbatches,
                           s.one_f_one_b ? "1F1B" : "GPipe",
                           s.chunks > 1 ? fmt::format(", {} model chunks per stage", s.chunks) : "");
    const double width = traces::data_type_size(s.dtype);
    const double h = s.hidden, b = s.batch, q = s.seq;
    const double layer_flops = 24 * b * q * h * h + 4 * b * q * q * h;
    const double layer_bytes = width * (12 * h * h + 8 * b * q * h);  // weights plus activations in and out
    const auto activation_bytes = static_cast<std::uint64_t>(width * b * q * h);
    const auto layer_grad_bytes = static_cast<std::uint64_t>(width * 12 * h * h);
    const auto rank_of = [&](std::uint32_t replica, std::uint32_t stage) { return RankId{replica * s.pp + stage}; };

    // Communicators: one per adjacent stage pair of a replica (and, with model chunks, one from the last stage back
    // to the first, which chunk c + 1 receives from); one data-parallel group per stage.
    std::vector<std::vector<traces::CommId>> pair_comm(s.dp);
    std::vector<traces::CommId> wrap_comm(s.dp);
    for (std::uint32_t d = 0; d < s.dp; ++d) {
        for (std::uint32_t st = 0; st + 1 < s.pp; ++st)
            pair_comm[d].push_back(
                g.communicator(fmt::format("pp{}.{}-{}", d, st, st + 1), {rank_of(d, st), rank_of(d, st + 1)}));
        if (s.chunks > 1 && s.pp > 1)
            wrap_comm[d] = g.communicator(fmt::format("pp{}.{}-0", d, s.pp - 1), {rank_of(d, s.pp - 1), rank_of(d, 0)});
    }
    std::vector<traces::CommId> dp_comm;
    if (s.dp > 1) {
        for (std::uint32_t st = 0; st < s.pp; ++st) {
            std::vector<RankId> members;
            for (std::uint32_t d = 0; d < s.dp; ++d) members.push_back(rank_of(d, st));
            dp_comm.push_back(g.communicator(fmt::format("dp.stage{}", st), members));
        }
    }

    for (std::uint32_t d = 0; d < s.dp; ++d) {
        for (std::uint32_t st = 0; st < s.pp; ++st) {
            const RankId rank = rank_of(d, st);
            // With model chunks the first stage receives activations from the last and gradients from the second:
            // activations and gradients get their own streams, each in schedule order.
            const auto compute = g.stream(rank, "compute");
            const auto recv = g.stream(rank, s.chunks > 1 ? "recv act" : "recv"),
                       send = g.stream(rank, s.chunks > 1 ? "send act" : "send");
            const auto recv_grad = s.chunks > 1 ? g.stream(rank, "recv grad") : recv,
                       send_grad = s.chunks > 1 ? g.stream(rank, "send grad") : send;
            const auto dp = s.dp > 1 ? g.stream(rank, "dp") : traces::StreamId::invalid();
            OpId last_compute;  // receives are posted when the schedule reaches their step: after this op
            auto posted = [&]() {
                return last_compute.valid() ? std::vector<OpId>{last_compute} : std::vector<OpId>{};
            };
            auto compute_op = [&](const std::string& name, double flops, engine::Time fixed, std::vector<OpId> deps) {
                traces::Op op{compute, g.intern(name), OpKind::compute, traces::KernelClass::gemm, s.dtype};
                op.set_flops(flops);
                op.set_bytes(static_cast<std::uint64_t>(layer_bytes * s.layers / s.chunks));
                last_compute = g.add(op, deps, fixed);
                return last_compute;
            };
            // A message between stages: compressed (encoded on the sender's compute stream before the send, decoded
            // on the receiver's after the receive) when its direction is.
            auto p2p = [&](OpKind kind, traces::StreamId stream, const std::string& name, std::uint32_t peer_stage,
                           traces::CommId comm, std::vector<OpId> deps, bool compressed) {
                const double bytes = static_cast<double>(activation_bytes);
                const double sent = compressed ? s.compression.codec.sent_bytes(bytes, width) : bytes;
                auto codec_kernel = [&](const std::string& what, double traffic, OpId after) {
                    traces::Op op{compute, g.intern(what + name.substr(4)), OpKind::compute,
                                  traces::KernelClass::elementwise, s.dtype};
                    op.set_bytes(engine::saturated_bytes(traffic));
                    last_compute = g.add(op, std::vector<OpId>{after});
                    return last_compute;
                };
                if (compressed && kind == OpKind::send)
                    deps = {codec_kernel("encode", s.compression.codec.encode_traffic(bytes, sent), deps.front())};
                traces::Op op{stream, g.intern(name), kind, traces::KernelClass::communication, s.dtype};
                op.set_bytes(engine::saturated_bytes(sent));
                op.set_comm(comm);
                op.set_peer(rank_of(d, peer_stage));
                const OpId message = g.add(op, deps);
                if (compressed && kind == OpKind::recv)
                    return codec_kernel("decode", Compression::decode_traffic(sent, bytes), message);
                return message;
            };
            const bool zip_act = s.compression.on(false), zip_grad = s.compression.on(true);
            const engine::Time fwd_time = s.forward_time;
            const engine::Time bwd_time = s.backward_time.count() >= 0  ? s.backward_time
                                          : s.forward_time.count() >= 0 ? engine::Time{2 * s.forward_time.count()}
                                                                        : engine::Time{-1};
            // Per model chunk: its share of the stage's layers, FLOPs and fixed times.
            const std::uint32_t chunk_layers = s.layers / s.chunks;
            const double fwd_flops = layer_flops * chunk_layers;
            auto chunk_time = [&](engine::Time t) { return t.count() >= 0 ? engine::Time{t.count() / s.chunks} : t; };
            // The stage and communicator a chunk's input comes from and its output goes to (none: the model's end).
            struct Peer {
                std::uint32_t stage = UINT32_MAX;
                traces::CommId comm;
            };
            auto before = [&](std::uint32_t c) {
                return st > 0 ? Peer{st - 1, pair_comm[d][st - 1]} : c > 0 ? Peer{s.pp - 1, wrap_comm[d]} : Peer{};
            };
            auto after = [&](std::uint32_t c) {
                return st + 1 < s.pp      ? Peer{st + 1, pair_comm[d][st]}
                       : c + 1 < s.chunks ? Peer{0, wrap_comm[d]}
                                          : Peer{};
            };
            OpId last_backward, last_allreduce;
            const auto schedule =
                s.one_f_one_b ? traces::PipelineSchedule::one_f_one_b : traces::PipelineSchedule::gpipe;
            for (const traces::PipelineStep& step :
                 traces::pipeline_schedule(schedule, s.pp, st, s.microbatches, s.chunks)) {
                const std::string tag = s.chunks > 1 ? fmt::format("mb{} chunk{}", step.micro_batch, step.chunk)
                                                     : fmt::format("mb{}", step.micro_batch);
                if (step.forward) {
                    std::vector<OpId> deps;
                    if (const Peer from = before(step.chunk); from.comm.valid())
                        deps.push_back(
                            p2p(OpKind::recv, recv, "recv act " + tag, from.stage, from.comm, posted(), zip_act));
                    const OpId fwd = compute_op("forward " + tag, fwd_flops, chunk_time(fwd_time), deps);
                    if (const Peer to = after(step.chunk); to.comm.valid())
                        p2p(OpKind::send, send, "send act " + tag, to.stage, to.comm, {fwd}, zip_act);
                    continue;
                }
                std::vector<OpId> deps;
                if (const Peer from = after(step.chunk); from.comm.valid())
                    deps.push_back(
                        p2p(OpKind::recv, recv_grad, "recv grad " + tag, from.stage, from.comm, posted(), zip_grad));
                const bool final_mb = step.micro_batch + 1 == s.microbatches;
                if (!final_mb || s.dp == 1) {
                    last_backward = compute_op("backward " + tag, 2 * fwd_flops, chunk_time(bwd_time), deps);
                } else {
                    // Layer by layer (last layer first), each layer's gradients all-reduced as soon as they exist.
                    const engine::Time per_layer =
                        bwd_time.count() >= 0 ? engine::Time{bwd_time.count() / s.layers} : engine::Time{-1};
                    for (std::uint32_t k = chunk_layers; k-- > 0;) {
                        const std::uint32_t l = step.chunk * chunk_layers + k;
                        last_backward = compute_op(fmt::format("backward mb{} layer{}", step.micro_batch, l),
                                                   2 * layer_flops, per_layer, deps);
                        deps.clear();
                        traces::Op ar{dp, g.intern(fmt::format("all-reduce grads layer{}", l)), OpKind::collective,
                                      traces::KernelClass::communication, s.dtype};
                        ar.collective = traces::CollectiveKind::all_reduce;
                        ar.set_bytes(layer_grad_bytes);
                        ar.set_comm(dp_comm[st]);
                        last_allreduce = g.add(ar, std::vector<OpId>{last_backward});
                    }
                }
                if (const Peer to = before(step.chunk); to.comm.valid())
                    p2p(OpKind::send, send_grad, "send grad " + tag, to.stage, to.comm, {last_backward}, zip_grad);
            }
            if (s.optimizer) {
                // The optimizer step waits for every gradient all-reduce of this rank (the tail of the dp stream).
                std::vector<OpId> deps{last_backward};
                if (last_allreduce.valid()) deps.push_back(last_allreduce);
                traces::Op opt{compute, g.intern("optimizer step"), OpKind::compute, traces::KernelClass::optimizer,
                               traces::DataType::fp32};
                opt.set_bytes(
                    static_cast<std::uint64_t>(16 * 12 * h * h * s.layers));  // fp32 master weights and Adam moments
                g.add(opt, deps);
            }
        }
    }
    return g;
}

}  // namespace clustersim::workloads
