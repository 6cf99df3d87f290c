// The transformer generator: a decoder-only transformer (dense or MoE) trained with Megatron-style tensor
// (and sequence) parallelism, pipeline parallelism (GPipe, 1F1B or interleaved 1F1B), context parallelism
// (ring attention), data parallelism with ZeRO stages 0-3, and expert parallelism. Per rank: a "compute" stream
// runs the kernels and the blocking TP and EP collectives in program order; pipeline receives are posted when the
// schedule reaches their step, sends right after the producing kernel; "dp" reduces gradient buckets as the last
// micro-batch's backward fills them; "zero" gathers ZeRO-3 parameters one layer ahead; "cp send"/"cp recv" pass
// K and V blocks around the context-parallel ring. Costs: workloads/transformer/transformer_costs.cpp.
#include <fmt/format.h>

#include "engine/error.h"
#include "engine/huge_pages.h"
#include "engine/memory_budget.h"
#include "engine/page_warmer.h"
#include "traces/rank_interleave.h"
#include "workloads/transformer/transformer_builder.h"
#include "workloads/workload_registry.h"

namespace clustersim::workloads {

using traces::CollectiveKind;
using traces::CommId;
using traces::OpKind;

TransformerBuilder::TransformerBuilder(const TransformerPlan& plan) : plan_(plan), grid_(plan) {
    for (std::uint32_t l = 0; l < plan.model.layers; ++l) costs_.push_back(layer_costs(plan, l));
}

CommId TransformerBuilder::add_comm(const std::string& name, const std::vector<std::uint32_t>& members) {
    traces::Communicator c;
    c.name = name;
    for (const auto m : members)
        if (sim_index_[m] != UINT32_MAX) c.ranks.push_back(traces::RankId{sim_index_[m]});
    if (c.ranks.empty()) return CommId::invalid();  // no simulated member: nobody issues its calls
    if (c.ranks.size() < members.size()) c.job_members = members;
    g_.comms.push_back(std::move(c));
    return CommId::from_index(g_.comms.size() - 1);
}

void TransformerBuilder::make_communicators() {
    const std::uint32_t n = grid_.size();
    comms_.assign(n, RankComms{});
    pp_peer_next_.assign(n, UINT32_MAX);
    pp_peer_prev_.assign(n, UINT32_MAX);
    cp_next_.assign(n, 0);
    cp_prev_.assign(n, 0);
    auto groups = [&](GroupKind kind, const char* family, CommId RankComms::*slot) {
        for (std::uint32_t r = 0; r < n; ++r) {
            if (grid_.group_index(r, kind) != r) continue;
            const auto members = grid_.group(r, kind);
            if (members.size() < 2) continue;
            const CommId id = add_comm(fmt::format("{}.{}", family, r), members);
            for (std::size_t i = 0; i < members.size(); ++i) {
                comms_[members[i]].*slot = id;
                if (kind == GroupKind::cp) {
                    cp_next_[members[i]] = members[(i + 1) % members.size()];
                    cp_prev_[members[i]] = members[(i + members.size() - 1) % members.size()];
                }
            }
        }
    };
    groups(GroupKind::tp, "tp", &RankComms::tp);
    groups(GroupKind::cp, "cp", &RankComms::cp);
    groups(GroupKind::dp_cp, "dp", &RankComms::dp);
    if (plan_.model.experts > 0) {
        groups(GroupKind::ep, "ep", &RankComms::ep);
        groups(GroupKind::expert_dp, "edp", &RankComms::edp);
    }
    // Pipeline: one communicator per adjacent stage pair, and with model chunks one from the last stage back to
    // the first (chunk c + 1 starts where chunk c ended).
    for (std::uint32_t r = 0; r < n; ++r) {
        const GridCoord c = grid_.coord(r);
        const std::uint32_t st = c[GridDim::pp];
        if (st + 1 == plan_.pp && (plan_.virtual_stages == 1 || plan_.pp == 1)) continue;
        GridCoord next = c;
        next[GridDim::pp] = (st + 1) % plan_.pp;
        const std::uint32_t to = grid_.rank(next);
        const CommId id = add_comm(fmt::format("pp.{}-{}", r, to), {r, to});
        comms_[r].pp_next = id;
        comms_[to].pp_prev = id;
        pp_peer_next_[r] = to;
        pp_peer_prev_[to] = r;
    }
}

traces::StreamId TransformerBuilder::add_stream(const char* name) {
    g_.streams.push_back(traces::Stream{traces::RankId{sim_rank_}, name});
    return traces::StreamId::from_index(g_.streams.size() - 1);
}

double TransformerBuilder::table_params() const { return plan_.model.vocab * double(plan_.model.hidden) / plan_.tp; }

double TransformerBuilder::output_params() const {
    // The output layer and final norm on the last stage; a tied output layer on a one-stage pipeline is the
    // embedding itself.
    const bool tied_here = plan_.model.tie_embeddings && plan_.pp == 1;
    return plan_.model.hidden + (tied_here ? 0.0 : table_params());
}

double TransformerBuilder::boundary_bytes() const {
    // The activations (or their gradients) passed between pipeline stages: T x h, split over TP with SP.
    return activation_width(plan_) * plan_.local_tokens() * plan_.model.hidden /
           (plan_.sequence_parallel ? plan_.tp : 1);
}

double TransformerBuilder::boundary_message(bool backward) const {
    const double bytes = boundary_bytes();
    return plan_.pp_compression.on(backward) ? plan_.pp_compression.codec.sent_bytes(bytes, activation_width(plan_))
                                             : bytes;
}

void TransformerBuilder::encode_boundary(bool backward, const std::string& tag) {
    if (!plan_.pp_compression.on(backward)) return;
    const KernelCost encode{0, plan_.pp_compression.codec.encode_traffic(boundary_bytes(), boundary_message(backward))};
    compute_named(fmt::format("encode {} {}", backward ? "grad" : "act", tag), encode, UINT32_MAX);
}

void TransformerBuilder::decode_boundary(bool backward, const std::string& tag) {
    if (!plan_.pp_compression.on(backward)) return;
    const KernelCost decode{0, Compression::decode_traffic(boundary_message(backward), boundary_bytes())};
    compute_named(fmt::format("decode {} {}", backward ? "grad" : "act", tag), decode, UINT32_MAX);
}

std::uint32_t TransformerBuilder::chunk_first_layer(std::uint32_t chunk) const {
    return plan_.chunk_layers(chunk, stage_).first;
}

void TransformerBuilder::choose_simulated() {
    // Ops per rank, roughly: each schedule step runs its chunk's layers at about 40 ops each (more with CP).
    const double per_layer = 40.0 + (plan_.cp > 1 ? 8.0 * plan_.cp : 0.0);
    const double per_rank =
        double(plan_.microbatches) * plan_.virtual_stages * 2 * plan_.most_chunk_layers() * per_layer;
    constexpr double budget = 3e6;
    Fold fold = plan_.fold;
    if (fold == Fold::automatic) {
        const double all = per_rank * grid_.size();
        fold = all <= budget || plan_.dp == 1              ? Fold::none
               : all / plan_.dp <= budget || plan_.tp == 1 ? Fold::dp
                                                           : Fold::tp_dp;
    }
    sim_index_.assign(grid_.size(), UINT32_MAX);
    simulated_.clear();
    for (std::uint32_t r = 0; r < grid_.size(); ++r) {
        const GridCoord c = grid_.coord(r);
        if (fold != Fold::none && c[GridDim::dp] != 0) continue;
        if (fold == Fold::tp_dp && c[GridDim::tp] != 0) continue;
        sim_index_[r] = static_cast<std::uint32_t>(simulated_.size());
        simulated_.push_back(r);
    }
    const double ops = per_rank * simulated_.size();
    // The ops expected: at most 0.6 of the rough count above (the unfolded GPT-3 and Llama 3 plans of
    // docs/performance.md have 0.38 and 0.39 of it), and what the run holds for each: at most about 150 bytes (the
    // graph, the timeline and the replay's state; measured 51 on the unfolded GPT-3 iteration and 61 on Llama 3 at
    // 16,384 GPUs since ops take 28 bytes and their run state 2, performance.md; the bound is kept for traces, whose
    // ops carry measured durations and more of the state kept only where needed).
    // Checked against the memory budget before a single op is built.
    const double expected = ops * 0.6;
    engine::require_memory(
        expected * 150.0,
        fmt::format("the plan (at most about {:.1f} M ops: {} simulated ranks x {} micro-batches x {} layers per "
                    "stage)",
                    expected / 1e6, simulated_.size(), plan_.microbatches, plan_.model.layers / plan_.pp),
        "use fewer micro-batches (global_batch_size), fold: tp+dp, or fewer ranks", "workload");
    g_.rank_count = static_cast<std::uint32_t>(simulated_.size());
    if (simulated_.size() < grid_.size()) {
        g_.job_ranks = simulated_;
        g_.job_rank_count = grid_.size();
    }
    // Room for the expected ops and their dependencies (at most one list per op, and 2 dependencies per op, well
    // above these plans'), so that the arrays are not copied as they grow (every copy writes fresh pages: a doubling
    // array touches twice its size). Capacity past what is filled costs address space only.
    engine::reserve_huge(g_.ops, static_cast<std::size_t>(expected));
    g_.op_deps.reserve(static_cast<std::size_t>(expected), static_cast<std::size_t>(expected),
                       static_cast<std::size_t>(expected * 2));
}

void TransformerBuilder::build_rank(std::uint32_t rank) {
    rank_ = rank;
    sim_rank_ = sim_index_[rank];
    stage_ = grid_.coord(rank)[GridDim::pp];
    s_.compute = add_stream("compute");
    if (plan_.pp > 1) {
        s_.recv_act = add_stream("pp recv act");
        s_.recv_grad = add_stream("pp recv grad");
        s_.send_act = add_stream("pp send act");
        s_.send_grad = add_stream("pp send grad");
    }
    if (comms_[rank].dp.valid() || comms_[rank].edp.valid()) s_.dp = add_stream("dp");
    if (plan_.zero_stage == 3 && s_.dp.valid()) s_.zero = add_stream("zero");
    if (plan_.cp > 1) {
        s_.cp_send = add_stream("cp send");
        s_.cp_recv = add_stream("cp recv");
    }
    last_compute_ = last_dp_ = layer_first_ = OpId::invalid();
    pending_.clear();
    bucket_ = {};
    const StaticMemory mem = static_memory(plan_, stage_);
    memory(OpKind::alloc, traces::MemoryUse::parameters, mem.parameters, "parameters");
    memory(OpKind::alloc, traces::MemoryUse::gradients, mem.gradients, "gradients");
    memory(OpKind::alloc, traces::MemoryUse::optimizer_state, mem.optimizer_state, "optimizer state");
    if (mem.buffers > 0) memory(OpKind::alloc, traces::MemoryUse::buffers, mem.buffers, "parameter gather buffers");
    if (plan_.dp_compression.on() && plan_.dp_compression.error_feedback)
        memory(OpKind::alloc, traces::MemoryUse::buffers, mem.gradients, "dp compression residual");
    if (plan_.pp > 1 && plan_.pp_compression.codec.error_feedback) {
        // Error feedback keeps each compressed direction's residual, per model chunk.
        const double residuals = double(plan_.pp_compression.on(false)) + double(plan_.pp_compression.on(true));
        if (residuals > 0)
            memory(OpKind::alloc, traces::MemoryUse::buffers, residuals * plan_.virtual_stages * boundary_bytes(),
                   "compression residuals");
    }
    activation_bytes_.assign(plan_.virtual_stages, 0);
    for (std::uint32_t c = 0; c < plan_.virtual_stages; ++c)
        for (std::uint32_t l = chunk_first_layer(c); l < chunk_first_layer(c) + plan_.chunk_layers(c, stage_).second;
             ++l)
            activation_bytes_[c] += costs_[l].activation_bytes;
    for (const traces::PipelineStep& step :
         traces::pipeline_schedule(plan_.schedule, plan_.pp, stage_, plan_.microbatches, plan_.virtual_stages)) {
        if (step.forward)
            forward_step(step.micro_batch, step.chunk);
        else
            backward_step(step.micro_batch, step.chunk);
    }
    finish_rank();
}

void TransformerBuilder::forward_step(std::uint32_t mb, std::uint32_t chunk) {
    const std::uint32_t vstage = chunk * plan_.pp + stage_;
    const bool first = vstage == 0, last = vstage + 1 == plan_.pp * plan_.virtual_stages;
    const std::string tag = plan_.virtual_stages > 1 ? fmt::format("mb{} chunk{}", mb, chunk) : fmt::format("mb{}", mb);
    if (!first) {
        // Posted when the rank reaches this step: after the kernel before it.
        std::vector<OpId> deps;
        if (last_compute_.valid()) deps.push_back(last_compute_);
        pending_.push_back(p2p(OpKind::recv, s_.recv_act, comms_[rank_].pp_prev, pp_peer_prev_[rank_],
                               boundary_message(false), "recv act " + tag, deps));
        decode_boundary(false, tag);
    }
    memory(OpKind::alloc, traces::MemoryUse::activations, activation_bytes_[chunk], "activations");
    if (first) {
        if (plan_.zero_stage == 3) gather_parameters(UINT32_MAX, table_params());
        compute("embedding", embedding_cost(plan_), UINT32_MAX);
    }
    const std::uint32_t first_layer = chunk_first_layer(chunk);
    for (std::uint32_t l = first_layer; l < first_layer + plan_.chunk_layers(chunk, stage_).second; ++l)
        forward_layer(l, false);
    if (last) {
        memory(OpKind::alloc, traces::MemoryUse::logits, logits_bytes(plan_), "logits");
        if (plan_.zero_stage == 3) gather_parameters(UINT32_MAX, output_params());
        compute("logits", logits_cost(plan_), UINT32_MAX);
        compute("loss", loss_cost(plan_), UINT32_MAX);
    } else {
        encode_boundary(false, tag);
        const OpId deps[] = {last_compute_};
        p2p(OpKind::send, s_.send_act, comms_[rank_].pp_next, pp_peer_next_[rank_], boundary_message(false),
            "send act " + tag, deps);
    }
}

void TransformerBuilder::backward_step(std::uint32_t mb, std::uint32_t chunk) {
    const std::uint32_t vstage = chunk * plan_.pp + stage_;
    const bool first = vstage == 0, last = vstage + 1 == plan_.pp * plan_.virtual_stages;
    const bool final_mb = mb + 1 == plan_.microbatches;
    const std::string tag = plan_.virtual_stages > 1 ? fmt::format("mb{} chunk{}", mb, chunk) : fmt::format("mb{}", mb);
    const double boundary = boundary_message(true);
    if (!last) {
        std::vector<OpId> deps;
        if (last_compute_.valid()) deps.push_back(last_compute_);
        pending_.push_back(p2p(OpKind::recv, s_.recv_grad, comms_[rank_].pp_next, pp_peer_next_[rank_], boundary,
                               "recv grad " + tag, deps));
        decode_boundary(true, tag);
    } else {
        if (plan_.zero_stage == 3) gather_parameters(UINT32_MAX, output_params());
        compute("loss backward", loss_cost(plan_), UINT32_MAX);
        compute("logits backward", backward_of(logits_cost(plan_)), UINT32_MAX);
        memory(OpKind::free, traces::MemoryUse::logits, logits_bytes(plan_), "logits");
        if (final_mb) bucket_.dense_bytes += activation_width(plan_) * output_params();
    }
    const std::uint32_t first_layer = chunk_first_layer(chunk);
    for (std::uint32_t l = first_layer + plan_.chunk_layers(chunk, stage_).second; l-- > first_layer;)
        backward_layer(l, final_mb);
    if (first) {
        if (plan_.zero_stage == 3) gather_parameters(UINT32_MAX, table_params());
        compute("embedding backward", backward_of(embedding_cost(plan_)), UINT32_MAX);
        if (final_mb) bucket_.dense_bytes += activation_width(plan_) * table_params();
    }
    memory(OpKind::free, traces::MemoryUse::activations, activation_bytes_[chunk], "activations");
    if (final_mb && plan_.zero_stage < 3) reduce_bucket();
    if (!first) {
        encode_boundary(true, tag);
        const OpId deps[] = {last_compute_};
        p2p(OpKind::send, s_.send_grad, comms_[rank_].pp_prev, pp_peer_prev_[rank_], boundary, "send grad " + tag,
            deps);
    }
}

void TransformerBuilder::finish_rank() {
    emit_decodes();
    if (!plan_.optimizer) return;
    // Adam over this rank's shard: reads fp32 master weights, two moments and the gradient, writes all but the
    // gradient and the working copy of the weights.
    const StageParams p = stage_params(plan_, stage_);
    const double shards = plan_.zero_stage >= 1 ? double(plan_.cp) * plan_.dp : 1.0;
    const double expert_shards = plan_.zero_stage >= 1 ? shards / plan_.ep : 1.0;
    const double shard = p.dense / shards + p.expert / expert_shards;
    KernelCost step;
    step.kernel_class = traces::KernelClass::optimizer;
    step.bytes = shard * (24.0 + 2.0 * activation_width(plan_));
    if (last_dp_.valid()) pending_.push_back(last_dp_);
    const OpId opt = compute("optimizer step", step, UINT32_MAX);
    if (plan_.zero_stage >= 1 && s_.dp.valid()) {
        // The updated shards gathered back into every replica's weights.
        const OpId deps[] = {opt};
        const double e = activation_width(plan_);
        if (comms_[rank_].dp.valid())
            collective(s_.dp, comms_[rank_].dp, CollectiveKind::all_gather, e * p.dense / shards, "all-gather params",
                       deps);
        if (p.expert > 0 && comms_[rank_].edp.valid())
            collective(s_.dp, comms_[rank_].edp, CollectiveKind::all_gather, e * p.expert / expert_shards,
                       "all-gather expert params", deps);
    }
}

void TransformerBuilder::describe_derived() {
    const TransformerModel& m = plan_.model;
    auto& d = g_.derived;
    d.push_back(fmt::format("world_size: {} (tp {} x cp {} x pp {} x dp {})", grid_.size(), plan_.tp, plan_.cp,
                            plan_.pp, plan_.dp));
    d.push_back(fmt::format("dp: {}", plan_.dp));
    d.push_back(fmt::format("global_batch_size: {} sequences, {} tokens", plan_.global_batch_size,
                            double(plan_.global_batch_size) * m.seq_len));
    d.push_back(fmt::format("microbatches_per_replica: {}", plan_.microbatches));
    d.push_back(fmt::format("parameters: {:.4g} (active in matmuls per token: {:.4g})", m.total_params(),
                            m.active_matmul_params()));
    d.push_back(fmt::format("model_flops_per_iteration: {:.6g}", model_flops_per_iteration(plan_)));
    d.push_back(fmt::format("simulated_ranks: {} of {}", simulated_.size(), grid_.size()));
    for (std::uint32_t st = 0; st < plan_.pp; ++st) {
        std::string layers;
        for (std::uint32_t c = 0; c < plan_.virtual_stages; ++c) {
            const auto [first, count] = plan_.chunk_layers(c, st);
            layers += fmt::format("{}{}-{}", c ? ", " : "", first, first + count - 1);
        }
        d.push_back(fmt::format("stage {} layers: {}{}{}", st, layers, st == 0 ? " + embedding" : "",
                                st + 1 == plan_.pp ? " + output layer" : ""));
    }
}

traces::OpGraph TransformerBuilder::build() {
    choose_simulated();
    const TransformerModel& m = plan_.model;
    g_.source = fmt::format(
        "transformer generator ({}{} layers, h {}, tp {}{}, pp {}{}, cp {}, dp {}, ep {}, zero {}, "
        "{} micro-batches of {})",
        m.name.empty() ? "" : m.name + ": ", m.layers, m.hidden, plan_.tp, plan_.sequence_parallel ? "+sp" : "",
        plan_.pp, plan_.virtual_stages > 1 ? fmt::format(" x{} chunks", plan_.virtual_stages) : "", plan_.cp, plan_.dp,
        plan_.ep, plan_.zero_stage, plan_.microbatches, plan_.micro_batch_size);
    g_.training.model_flops = model_flops_per_iteration(plan_);
    g_.training.tokens = double(plan_.global_batch_size) * m.seq_len;
    g_.training.dtype = plan_.dtype;
    make_communicators();
    describe_derived();
    {
        // The ops' arrays are reserved (whole, above): their next pages are faulted in on another thread while
        // this one writes (engine/page_warmer.h).
        engine::PageWarmer warmer;
        const auto follow = [&] {
            warmer.follow(0, g_.ops);
            warmer.follow(1, g_.op_deps.ends());
            warmer.follow(2, g_.op_deps.ids());
        };
        follow();
        // A tensor-parallel group's ranks run in step: their ops are laid side by side (traces/rank_interleave.h).
        const std::size_t group = interleaved_group();
        traces::InterleaveScratch scratch;
        std::size_t group_first = 0;
        for (std::size_t i = 0; i < simulated_.size(); ++i) {
            if (i % group == 0) group_first = g_.ops.size();
            build_rank(simulated_[i]);
            if (group > 1 && i % group == group - 1) traces::interleave_ranks(g_, group_first, scratch);
            follow();
        }
        warmer.finish();  // (the graph is complete: what was faulted in past its ends goes back)
    }
    if (plan_.pp > 1)
        for (const std::uint32_t r : simulated_) g_.rank_stage.push_back(grid_.coord(r)[GridDim::pp]);
    return std::move(g_);
}

std::size_t TransformerBuilder::interleaved_group() const {
    // Tensor-parallel peers, when every group is simulated whole and its members follow one another.
    const std::size_t tp = plan_.tp;
    if (tp < 2 || simulated_.size() % tp != 0) return 1;
    for (std::size_t i = 0; i < simulated_.size(); ++i) {
        GridCoord c = grid_.coord(simulated_[i]);
        if (c[GridDim::tp] != i % tp) return 1;
        c[GridDim::tp] = 0;
        if (c.at != grid_.coord(simulated_[i - i % tp]).at) return 1;
    }
    return tp;
}

traces::OpGraph build_transformer(const engine::Params& params) {
    const TransformerPlan plan = read_transformer_plan(params);
    TransformerBuilder builder(plan);
    return builder.build();
}

}  // namespace clustersim::workloads
