// The pipeline generator: a transformer whose layers are split over `pp` stages, run with a GPipe or 1F1B
// schedule over `microbatches` micro-batches, and replicated `dp` times. Rank = replica * pp + stage, so the
// stages of a replica sit side by side (on one node's NVLink when pp divides the GPUs per node) and each
// data-parallel group spans the replicas.
//
// Per rank: stream "compute" runs forwards and backwards in schedule order; stream "recv" posts receives and
// stream "send" posts sends, each in the order the schedule needs them (NCCL send/recv are rendezvous); stream
// "dp" all-reduces each layer's gradients as soon as the last micro-batch's backward of that layer is done,
// overlapping the backward of the layers before it (as Megatron's overlapped gradient reduction does).
// FLOPs per layer and micro-batch: forward 24·b·s·h² + 4·b·s²·h, backward twice that (Narayanan et al., SC21).
#include <fmt/format.h>

#include "engine/units.h"

#include "traces/pipeline_schedule.h"
#include "workloads/workload_registry.h"

namespace clustersim::workloads {

using traces::OpGraph;
using traces::OpId;
using traces::OpKind;
using traces::RankId;

namespace {

struct Shape {
    std::uint32_t pp = 1, dp = 1, microbatches = 1, layers = 1;
    bool one_f_one_b = true;
    double hidden = 0, seq = 0, batch = 0;
    traces::DataType dtype = traces::DataType::bf16;
    engine::Time forward_time{-1}, backward_time{-1};
    bool optimizer = true;
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
    return s;
}

}  // namespace

OpGraph build_pipeline_data_parallel(const engine::Params& params) {
    const Shape s = read_shape(params);
    OpGraph g;
    g.rank_count = s.pp * s.dp;
    g.source = fmt::format("pipeline generator (pp={}, dp={}, {} micro-batches, {})", s.pp, s.dp, s.microbatches,
                           s.one_f_one_b ? "1F1B" : "GPipe");
    const double width = traces::data_type_size(s.dtype);
    const double h = s.hidden, b = s.batch, q = s.seq;
    const double layer_flops = 24 * b * q * h * h + 4 * b * q * q * h;
    const double layer_bytes = width * (12 * h * h + 8 * b * q * h);  // weights plus activations in and out
    const auto activation_bytes = static_cast<std::uint64_t>(width * b * q * h);
    const auto layer_grad_bytes = static_cast<std::uint64_t>(width * 12 * h * h);
    const auto rank_of = [&](std::uint32_t replica, std::uint32_t stage) { return RankId{replica * s.pp + stage}; };

    // Communicators: one per adjacent stage pair of a replica; one data-parallel group per stage.
    std::vector<std::vector<traces::CommId>> pair_comm(s.dp);
    for (std::uint32_t d = 0; d < s.dp; ++d) {
        for (std::uint32_t st = 0; st + 1 < s.pp; ++st)
            pair_comm[d].push_back(
                g.communicator(fmt::format("pp{}.{}-{}", d, st, st + 1), {rank_of(d, st), rank_of(d, st + 1)}));
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
            const auto compute = g.stream(rank, "compute"), recv = g.stream(rank, "recv"),
                       send = g.stream(rank, "send");
            const auto dp = s.dp > 1 ? g.stream(rank, "dp") : traces::StreamId::invalid();
            auto compute_op = [&](const std::string& name, double flops, engine::Time fixed, std::vector<OpId> deps) {
                traces::Op op{rank, compute, g.intern(name), OpKind::compute, traces::KernelClass::gemm, s.dtype};
                op.flops = flops;
                op.bytes = static_cast<std::uint64_t>(layer_bytes * s.layers);
                op.duration = fixed;
                return g.add(op, deps);
            };
            auto p2p = [&](OpKind kind, traces::StreamId stream, const std::string& name, std::uint32_t peer_stage,
                           traces::CommId comm, std::vector<OpId> deps) {
                traces::Op op{rank, stream, g.intern(name), kind, traces::KernelClass::communication, s.dtype};
                op.bytes = activation_bytes;
                op.comm = comm;
                op.peer = rank_of(d, peer_stage);
                return g.add(op, deps);
            };
            const bool last_stage = st + 1 == s.pp, first_stage = st == 0;
            const engine::Time fwd_time = s.forward_time;
            const engine::Time bwd_time = s.backward_time.count() >= 0  ? s.backward_time
                                          : s.forward_time.count() >= 0 ? engine::Time{2 * s.forward_time.count()}
                                                                        : engine::Time{-1};
            const double fwd_flops = layer_flops * s.layers;
            OpId last_backward, last_allreduce;
            const auto schedule =
                s.one_f_one_b ? traces::PipelineSchedule::one_f_one_b : traces::PipelineSchedule::gpipe;
            for (const traces::PipelineStep& step : traces::pipeline_schedule(schedule, s.pp, st, s.microbatches)) {
                if (step.forward) {
                    std::vector<OpId> deps;
                    if (!first_stage)
                        deps.push_back(p2p(OpKind::recv, recv, fmt::format("recv act mb{}", step.micro_batch), st - 1,
                                           pair_comm[d][st - 1], {}));
                    const OpId fwd =
                        compute_op(fmt::format("forward mb{}", step.micro_batch), fwd_flops, fwd_time, deps);
                    if (!last_stage)
                        p2p(OpKind::send, send, fmt::format("send act mb{}", step.micro_batch), st + 1,
                            pair_comm[d][st], {fwd});
                    continue;
                }
                const auto mb = static_cast<int>(step.micro_batch);
                std::vector<OpId> deps;
                if (!last_stage)
                    deps.push_back(
                        p2p(OpKind::recv, recv, fmt::format("recv grad mb{}", mb), st + 1, pair_comm[d][st], {}));
                const bool final_mb = mb + 1 == static_cast<int>(s.microbatches);
                if (!final_mb || s.dp == 1) {
                    last_backward = compute_op(fmt::format("backward mb{}", mb), 2 * fwd_flops, bwd_time, deps);
                } else {
                    // Layer by layer (last layer first), each layer's gradients all-reduced as soon as they exist.
                    const engine::Time per_layer =
                        bwd_time.count() >= 0 ? engine::Time{bwd_time.count() / s.layers} : engine::Time{-1};
                    for (std::uint32_t l = s.layers; l-- > 0;) {
                        last_backward =
                            compute_op(fmt::format("backward mb{} layer{}", mb, l), 2 * layer_flops, per_layer, deps);
                        deps.clear();
                        traces::Op ar{rank,
                                      dp,
                                      g.intern(fmt::format("all-reduce grads layer{}", l)),
                                      OpKind::collective,
                                      traces::KernelClass::communication,
                                      s.dtype};
                        ar.collective = traces::CollectiveKind::all_reduce;
                        ar.bytes = layer_grad_bytes;
                        ar.comm = dp_comm[st];
                        last_allreduce = g.add(ar, std::vector<OpId>{last_backward});
                    }
                }
                if (!first_stage)
                    p2p(OpKind::send, send, fmt::format("send grad mb{}", mb), st - 1, pair_comm[d][st - 1],
                        {last_backward});
            }
            if (s.optimizer) {
                // The optimizer step waits for every gradient all-reduce of this rank (the tail of the dp stream).
                std::vector<OpId> deps{last_backward};
                if (last_allreduce.valid()) deps.push_back(last_allreduce);
                traces::Op opt{rank,
                               compute,
                               g.intern("optimizer step"),
                               OpKind::compute,
                               traces::KernelClass::optimizer,
                               traces::DataType::fp32};
                opt.bytes =
                    static_cast<std::uint64_t>(16 * 12 * h * h * s.layers);  // fp32 master weights and Adam moments
                g.add(opt, deps);
            }
        }
    }
    return g;
}

}  // namespace clustersim::workloads
