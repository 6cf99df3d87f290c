// Text workload expansion. Ranks are laid out with tensor parallelism fastest, then data, then pipeline
// (Megatron's order): rank = stage x (dp x tp) + replica x tp + t. Each rank runs its stage's pipeline schedule
// (1F1B, interleaved over model chunks, or GPipe) over the micro-batches: forwards through a chunk's lines
// (receiving from the previous virtual stage first, sending to the next after), backwards in reverse (input
// gradient, then weight gradient); weight-gradient collectives run on their own stream, overlapping the rest of
// the backward, and each line's update waits for its collective. When the job is too large to expand whole, only
// the first data-parallel replicas are simulated and the others folded by symmetry.
#include "traces/formats/text_workload_reader.h"

#include <array>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/error.h"
#include "engine/log.h"
#include "engine/memory_budget.h"
#include "traces/pipeline_schedule.h"

namespace clustersim::traces {

OpGraph read_text_workload(const std::string& path, const TextWorkloadOptions& options) {
    const TextWorkloadFile file = parse_text_workload_file(path, options.time_unit);
    const TextHeader& h = file.header;
    const std::vector<TextLayer>& layers = file.layers;
    auto fail = [&](int line, const std::string& message) -> void {
        throw engine::InputError(engine::SourceLocation{path, line, 0, ""}, message);
    };
    const std::uint32_t world = options.world_size ? options.world_size : h.all_gpus;
    if (world == 0) fail(1, "the header has no all_gpus: give the world size (--world-size)");
    const bool hybrid =
        h.kind.rfind("HYBRID_TRANSFORMER", 0) == 0 || h.kind == "HYBRID_DATA_MODEL" || h.kind == "HYBRID_MODEL_DATA";
    const std::uint32_t tp = hybrid ? std::max<std::uint32_t>(1, h.tp) : h.kind == "MODEL" ? world : 1;
    if (world % (std::uint64_t{tp} * h.pp) != 0)
        fail(1, fmt::format("{} ranks do not split into tensor groups of {} and {} pipeline stages", world, tp, h.pp));
    const std::uint32_t dp = world / (tp * h.pp);
    if (dp % h.ep != 0)
        fail(1, fmt::format("ep: {} expert-parallel ranks do not divide the {} data-parallel replicas", h.ep, dp));
    const std::uint32_t ep = h.ep;
    const MicroBatchLayout layout = micro_batch_layout(layers, h.ga);
    if (options.simai && h.ga > 1 && !layout.unrolled)
        engine::layer_log("traces").warn(
            "{}: ga {} but the lines do not repeat {} times (AICB's layout): each micro-batch runs all {} lines", path,
            h.ga, h.ga, layers.size());
    // Model chunks per stage (interleaved 1F1B): the header's vpp unless overridden, when the micro-batches come
    // in groups of the stage count and each chunk gets a line; a micro-batch's lines split into equal runs.
    std::uint32_t chunks = h.pp > 1 ? std::max<std::uint32_t>(1, options.chunks ? options.chunks : h.vpp) : 1;
    if (chunks > 1 && (layout.micro_batches % h.pp != 0 || layout.last(0) - layout.first(0) < chunks)) {
        engine::layer_log("traces").warn(
            "{}: {} micro-batches of {} lines do not interleave over {} stages x {} "
            "chunks: one chunk per stage",
            path, layout.micro_batches, layout.last(0) - layout.first(0), h.pp, chunks);
        chunks = 1;
    }
    const std::vector<std::size_t> chunk_start = chunk_starts(layers, layout, chunks);
    auto chunk_lines = [&](std::uint32_t mb, std::uint32_t c) {
        const std::size_t first = layout.first(mb);
        return std::pair{first + chunk_start[c], first + chunk_start[c + 1]};
    };
    // Symmetry reduction: simulate the first `replicas` data-parallel replicas (all stages, all tensor ranks).
    std::uint32_t replicas = options.replicas ? std::min(options.replicas, dp) : dp;
    // Estimates in floating point: the products of header values can pass 2^64.
    // Per rank: up to three computes and three collectives per line and micro-batch, and per schedule step (two
    // per micro-batch and chunk, each a record the expansion builds and walks) with pipelining a receive and a
    // send: counted even when there are no lines.
    const double steps = 2.0 * layout.micro_batches * chunks;
    const double ops_per_rank =
        6.0 * static_cast<double>(layers.size()) * (layout.unrolled ? 1.0 : h.ga) + steps * (h.pp > 1 ? 3.0 : 1.0);
    if (options.replicas == 0 && ops_per_rank * world > static_cast<double>(options.max_ops)) replicas = 1;
    // Even reduced, a graph past a billion ops (about 70 GB) cannot be built: say so rather than run out of memory.
    const double simulated_ops = ops_per_rank * replicas * tp * h.pp;
    if (simulated_ops > 1e9)
        fail(1, fmt::format("the workload expands to about {:.3g} ops for {} simulated ranks ({} micro-batches of {} "
                            "lines): too large to replay (fewer --replicas, or a smaller ga)",
                            simulated_ops, std::uint64_t{replicas} * tp * h.pp, h.ga, layers.size()));

    // What the graph needs, checked before building it: about 200 bytes per op (the op, its dependencies, its
    // timing later) and 12 per job rank (the folded groups list their members by job rank).
    engine::require_memory(simulated_ops * 200.0 + 12.0 * world,
                           fmt::format("the workload ({:.3g} ops on {} simulated ranks of {})", simulated_ops,
                                       std::uint64_t{replicas} * tp * h.pp, world),
                           "fewer --replicas, a smaller all_gpus or ga", path);
    engine::MemoryScope scope("expanding the workload of " + path);
    OpGraph g;
    g.rank_count = replicas * tp * h.pp;
    g.source = path;
    auto rank_of = [&](std::uint32_t stage, std::uint32_t replica, std::uint32_t t) {
        return RankId{stage * replicas * tp + replica * tp + t};
    };
    auto job_rank_of = [&](std::uint32_t stage, std::uint32_t replica, std::uint32_t t) {
        return stage * dp * tp + replica * tp + t;
    };
    if (replicas < dp) {
        g.job_rank_count = world;
        for (std::uint32_t stage = 0; stage < h.pp; ++stage)
            for (std::uint32_t replica = 0; replica < replicas; ++replica)
                for (std::uint32_t t = 0; t < tp; ++t) g.job_ranks.push_back(job_rank_of(stage, replica, t));
    }
    // The communicator of a collective type for rank (stage, replica, t): its suffix or the phase picks the group;
    // members are (stage, replica, t) triples, simulated when the replica is. A group with members outside the
    // simulated replicas is folded: it keeps its whole membership by job rank.
    // A group is built once and then found by name, not rebuilt per (rank, line, phase) (that was quadratic in
    // the data-parallel width).
    auto group = [&](const std::string& type, std::size_t phase, std::uint32_t stage, std::uint32_t replica,
                     std::uint32_t t) {
        const bool dp_ep = type.find("_DP_EP") != std::string::npos;
        const bool ep_only = !dp_ep && type.find("_EP") != std::string::npos;
        const bool model = (phase < 2 && hybrid) || h.kind == "MODEL";
        const bool world_group = h.kind == "DATA" || h.kind == "MICRO" || h.kind == "HYBRID_DLRM" || h.kind == "MODEL";
        const std::string name = ep_only       ? fmt::format("ep.s{}.b{}.t{}", stage, replica / ep, t)
                                 : dp_ep       ? fmt::format("dp_ep.s{}.r{}.t{}", stage, replica % ep, t)
                                 : model       ? fmt::format("tp.s{}.d{}", stage, replica)
                                 : world_group ? std::string("world")
                                               : fmt::format("dp.s{}.t{}", stage, t);
        if (const auto existing = g.find_communicator(name)) return *existing;
        std::vector<std::array<std::uint32_t, 3>> members;
        if (ep_only) {
            const std::uint32_t block = replica / ep;
            for (std::uint32_t d = block * ep; d < (block + 1) * ep; ++d) members.push_back({stage, d, t});
        } else if (dp_ep) {
            for (std::uint32_t d = replica % ep; d < dp; d += ep) members.push_back({stage, d, t});
        } else if (model) {
            for (std::uint32_t k = 0; k < tp; ++k) members.push_back({stage, replica, k});
        } else if (world_group) {
            for (std::uint32_t s = 0; s < h.pp; ++s)
                for (std::uint32_t d = 0; d < dp; ++d)
                    for (std::uint32_t k = 0; k < tp; ++k) members.push_back({s, d, k});
        } else {
            for (std::uint32_t d = 0; d < dp; ++d) members.push_back({stage, d, t});
        }
        std::vector<RankId> simulated;
        std::vector<std::uint32_t> job;
        for (const auto& [s, d, k] : members) {
            if (d < replicas) simulated.push_back(rank_of(s, d, k));
            job.push_back(job_rank_of(s, d, k));
        }
        const CommId c = g.communicator(name, simulated);
        if (simulated.size() < members.size()) g.comms[c.index()].job_members = std::move(job);
        return c;
    };
    auto collective_kind = [&](const std::string& type, int line) -> std::optional<CollectiveKind> {
        if (type == "NONE") return std::nullopt;
        const std::string base = type.substr(0, type.find('_'));
        if (base == "ALLREDUCE") return CollectiveKind::all_reduce;
        if (base == "ALLGATHER") return CollectiveKind::all_gather;
        if (base == "REDUCESCATTER") return CollectiveKind::reduce_scatter;
        if (base == "ALLTOALL") return CollectiveKind::all_to_all;
        if (base == "BROADCAST") return CollectiveKind::broadcast;
        fail(line, fmt::format("unknown communication type \"{}\" (known: NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, "
                               "ALLTOALL, BROADCAST, "
                               "with _EP or _DP_EP suffixes)",
                               type));
        return std::nullopt;
    };
    for (std::uint32_t stage = 0; stage < h.pp; ++stage) {
        for (std::uint32_t replica = 0; replica < replicas; ++replica) {
            for (std::uint32_t t = 0; t < tp; ++t) {
                const RankId r = rank_of(stage, replica, t);
                const StreamId compute = g.stream(r, "compute"), comm = g.stream(r, "dp");
                // Pipeline transfers: activations and gradients each on their own communicator and streams, so
                // each (sender, receiver, communicator) carries one kind in one order (with interleaving, the last
                // stage sends both to stage 0).
                std::array<StreamId, 4> pp_streams;  // receive and send activations, receive and send gradients
                if (h.pp > 1) {
                    pp_streams = {g.stream(r, "pp recv act"), g.stream(r, "pp send act"), g.stream(r, "pp recv grad"),
                                  g.stream(r, "pp send grad")};
                }
                auto add_compute = [&](const std::string& name, engine::Time duration, std::vector<OpId> deps = {}) {
                    Op op{compute, g.intern(name), OpKind::compute, KernelClass::other};
                    return g.add(op, deps, duration);
                };
                auto add_collective = [&](const TextLayer& l, std::size_t p, StreamId stream,
                                          std::vector<OpId> deps) -> OpId {
                    const TextPhase& ph = l.phases[p];
                    const auto kind = collective_kind(ph.comm, l.line);
                    if (!kind) return OpId::invalid();
                    static constexpr std::array<const char*, 3> phase_names = {"fwd", "ig", "wg"};
                    Op op{stream, g.intern(fmt::format("{} {} {}", l.name, phase_names[p], ph.comm)),
                          OpKind::collective, KernelClass::communication};
                    op.collective = *kind;
                    op.set_bytes(ph.bytes);
                    op.set_comm(group(ph.comm, p, stage, replica, t));
                    if (options.simai && op.collective == CollectiveKind::all_gather) {
                        const Communicator& c = g.comms[op.comm().index()];
                        const std::uint64_t n = c.folded() ? c.job_members.size() : c.ranks.size();
                        op.set_bytes((ph.bytes + n - 1) / n);  // SimAI sizes the output; clustersim each rank's part
                    }
                    return g.add(op, deps);
                };
                auto pipeline_transfer = [&](OpKind kind, bool activation, std::uint32_t peer_stage,
                                             const std::string& name, std::vector<OpId> deps) {
                    const std::uint32_t lo = std::min(stage, peer_stage), hi = std::max(stage, peer_stage);
                    Op op{pp_streams[(activation ? 0 : 2) + (kind == OpKind::send ? 1 : 0)], g.intern(name), kind,
                          KernelClass::communication};
                    op.set_bytes(h.pp_comm);
                    op.set_peer(rank_of(peer_stage, replica, t));
                    op.set_comm(g.communicator(
                        fmt::format("pp.{}.{}-{}.d{}.t{}", activation ? "act" : "grad", lo, hi, replica, t),
                        {rank_of(lo, replica, t), rank_of(hi, replica, t)}));
                    return g.add(op, deps);
                };
                std::vector<OpId> wg_comm(layers.size(), OpId::invalid());
                // Forward through layers [first, last): compute, then its collective; the first waits for `before`.
                auto forward = [&](std::size_t first, std::size_t last, std::vector<OpId> before) {
                    OpId out;
                    for (std::size_t k = first; k < last; ++k) {
                        const TextLayer& l = layers[k];
                        out = add_compute(l.name + " fwd", l.phases[0].compute, before);
                        before.clear();
                        if (const OpId c = add_collective(l, 0, compute, {}); c.valid()) out = c;
                    }
                    return out;
                };
                // Backward through layers [first, last) in reverse; with `sync`, the weight-gradient collectives
                // run on their own stream.
                auto backward = [&](std::size_t first, std::size_t last, std::vector<OpId> before, bool sync) {
                    OpId out;
                    for (std::size_t k = last; k-- > first;) {
                        const TextLayer& l = layers[k];
                        out = add_compute(l.name + " ig", l.phases[1].compute, before);
                        before.clear();
                        if (const OpId c = add_collective(l, 1, compute, {}); c.valid()) out = c;
                        out = add_compute(l.name + " wg", l.phases[2].compute);
                        if (sync) wg_comm[k] = add_collective(l, 2, comm, {out});
                    }
                    return out;
                };
                // The previous and next virtual stage of chunk c: with interleaving, chunk c of the last stage
                // feeds chunk c + 1 of stage 0.
                constexpr std::uint32_t none = UINT32_MAX;
                auto previous = [&](std::uint32_t c) { return stage > 0 ? stage - 1 : c > 0 ? h.pp - 1 : none; };
                auto next = [&](std::uint32_t c) { return stage + 1 < h.pp ? stage + 1 : c + 1 < chunks ? 0 : none; };
                OpId reached = forward(0, layout.prefix, {});  // the rank's last compute-stream op so far
                bool suffix_done = false;
                auto run_suffix = [&] {
                    forward(layout.suffix, layers.size(), {});
                    backward(layout.suffix, layers.size(), {}, true);
                    suffix_done = true;
                };
                for (const PipelineStep& step :
                     pipeline_schedule(options.schedule, h.pp, stage, layout.micro_batches, chunks)) {
                    // GPipe: the trailing iteration-level lines between the last forward and the first backward;
                    // 1F1B: after the last backward.
                    if (!step.forward && !suffix_done && options.schedule == PipelineSchedule::gpipe) run_suffix();
                    const auto [first, last] = chunk_lines(step.micro_batch, step.chunk);
                    const std::string tag = chunks > 1 ? fmt::format("mb{} chunk{}", step.micro_batch, step.chunk)
                                                       : fmt::format("mb{}", step.micro_batch);
                    std::vector<OpId> before;
                    const std::uint32_t from = step.forward ? previous(step.chunk) : next(step.chunk);
                    const std::uint32_t to = step.forward ? next(step.chunk) : previous(step.chunk);
                    const char* what = step.forward ? "act" : "grad";
                    // A receive is posted when the rank reaches its step (as Megatron posts it with the previous
                    // step's send), not earlier: a posted NCCL receive occupies the GPU.
                    if (from != none) {
                        std::vector<OpId> posted;
                        if (reached.valid()) posted.push_back(reached);
                        before.push_back(pipeline_transfer(OpKind::recv, step.forward, from,
                                                           fmt::format("recv {} {}", what, tag), posted));
                    }
                    const bool sync = layout.unrolled || step.micro_batch + 1 == layout.micro_batches;
                    const OpId out = step.forward ? forward(first, last, std::move(before))
                                                  : backward(first, last, std::move(before), sync);
                    reached = out;
                    if (to != none)
                        pipeline_transfer(OpKind::send, step.forward, to, fmt::format("send {} {}", what, tag), {out});
                }
                if (!suffix_done) run_suffix();
                backward(0, layout.prefix, {}, true);
                for (std::size_t k = 0; k < layers.size(); ++k) {
                    if (layers[k].update.count() == 0) continue;
                    std::vector<OpId> deps;
                    if (wg_comm[k].valid()) deps.push_back(wg_comm[k]);
                    add_compute(layers[k].name + " update", layers[k].update, deps);
                }
            }
        }
    }
    validate(g);
    return g;
}

}  // namespace clustersim::traces
