// The layers generator: a model given as a list of layers (ResNet-50, VGG-16 or a YAML file) trained data
// parallel on `dp` ranks the way PyTorch DDP does it, with local SGD and gradient compression as options.
//
// Per rank and step, on stream "compute": the forward layers in order (each an implicit-GEMM kernel of the batch,
// then for a layer with `norm` a memory-bound kernel for its batch norm and ReLU: 4 passes over the output), the
// backward layers in reverse order (twice the forward FLOPs; the norm's backward 6 passes), the optimizer step.
// Gradients are reduced in DDP's buckets: filled in reverse layer order, a bucket closes once it holds `bucket_mb` (the
// first one `first_bucket_mb`) and is all-reduced on stream "dp" as soon as the backward of its last layer is done,
// overlapping the backward of the layers before it; the optimizer waits for every bucket.
//
// Local SGD (`local_steps` H > 1): no gradient reduction; after every H-th step the ranks average their parameters
// with one all-reduce, which the next step waits for. Compression (`compression`): each bucket is encoded before it
// is sent and decoded after; top-k and quantization cannot be summed in flight, so their buckets are all-gathered
// (each rank's compressed bucket) and decoded from all ranks; low-rank (PowerSGD-like) factors are all-reduced.
// With `error_feedback` the residual of every gradient is kept (memory) and read by the encoder.
//
// Gossip (`averaging: gossip`, decentralized SGD): no collective at all; after every H-th step each rank sends its
// parameters (compressed if asked) to each of its peers on `gossip_graph` and receives theirs (point-to-point, one
// stream per peer slot), then mixes them into its own (a memory-bound kernel over its own and every received copy);
// the next step waits for the mix.
//
// Memory per rank as allocations: parameters, gradients and optimizer state (fp32), each layer's activations from
// its forward to its backward, the error-feedback residual.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "engine/memory_budget.h"
#include "engine/split_list.h"
#include "engine/units.h"
#include "workloads/layers/layer_builder.h"
#include "workloads/workload_registry.h"

namespace clustersim::workloads {

using traces::CollectiveKind;
using traces::OpGraph;
using traces::OpId;
using traces::OpKind;
using traces::RankId;

namespace {

constexpr engine::NameTable<Averaging, 3> averaging_names{{{Averaging::allreduce, "allreduce"},
                                                           {Averaging::gossip, "gossip"},
                                                           {Averaging::parameter_server, "parameter_server"}}};
constexpr engine::NameTable<PsMode, 3> ps_mode_names{
    {{PsMode::sync, "sync"}, {PsMode::ssp, "ssp"}, {PsMode::async, "async"}}};

std::uint64_t integer_in(const engine::Params& p, const char* name, std::int64_t min, std::int64_t max) {
    return static_cast<std::uint64_t>(p.integer_in(name, min, max));
}

LayerPlan read_plan(const engine::Params& p) {
    LayerPlan plan;
    const engine::SourceLocation where = p.location("model");
    const std::string base = where.file.empty() || where.file.front() == '(' || where.file.rfind("--", 0) == 0
                                 ? std::string{}
                                 : std::filesystem::path(where.file).parent_path().string();
    plan.model = load_layer_model(p.string("model"), base, where);
    plan.dp = static_cast<std::uint32_t>(integer_in(p, "dp", 1, 1 << 20));
    plan.steps = static_cast<std::uint32_t>(integer_in(p, "steps", 1, 10'000));
    plan.local_steps = static_cast<std::uint32_t>(integer_in(p, "local_steps", 1, 10'000));
    const std::uint64_t global = integer_in(p, "global_batch", 0, std::int64_t{1} << 40);
    plan.batch = integer_in(p, "batch_per_gpu", 1, 1 << 24);
    if (global > 0) {
        if (global % plan.dp != 0)
            p.fail("global_batch", fmt::format("global batch {} does not split over dp = {} ranks", global, plan.dp));
        plan.batch = global / plan.dp;
    }
    auto dtype = [&](const char* key) {
        const auto t = traces::parse_data_type(p.string(key));
        if (!t) p.fail(key, fmt::format("unknown datatype '{}'", p.string(key)));
        return *t;
    };
    plan.dtype = dtype("dtype");
    plan.grad_dtype = dtype("grad_dtype");
    auto megabytes = [&](const char* key) {
        const double mb = p.number(key);
        if (!(mb > 0) || mb > 1e6) p.fail(key, fmt::format("expected a size in MiB above 0 and up to 1e6, got {}", mb));
        return mb * 1024 * 1024;
    };
    plan.bucket_bytes = megabytes("bucket_mb");
    plan.first_bucket_bytes = megabytes("first_bucket_mb");
    plan.compression = read_compression(p, "compression", "compression_ratio");
    plan.averaging = engine::choose(p, "averaging", averaging_names, "averaging");
    plan.servers = static_cast<std::uint32_t>(integer_in(p, "servers", 1, 1 << 16));
    plan.ps_mode = engine::choose(p, "ps_mode", ps_mode_names, "mode");
    plan.offload = p.string("offload") == "optimizer";
    if (!plan.offload && p.string("offload") != "none")
        p.fail("offload", fmt::format("unknown offload '{}' (known: none, optimizer)", p.string("offload")));
    plan.host_bandwidth = p.rate("host_bandwidth");
    if (!(plan.host_bandwidth > 0)) p.fail("host_bandwidth", "expected a bandwidth above 0");
    if (plan.offload && plan.averaging != Averaging::allreduce)
        p.fail("offload", "offloading the optimizer applies to averaging: allreduce");
    if (plan.offload && plan.local_steps > 1) p.fail("offload", "offloading the optimizer needs local_steps: 1");
    plan.staleness = static_cast<std::uint32_t>(integer_in(p, "staleness", 0, 10'000));
    plan.sparse_fraction = p.number("sparse_fraction");
    if (!(plan.sparse_fraction > 0) || plan.sparse_fraction > 1)
        p.fail("sparse_fraction", fmt::format("expected a fraction above 0 and up to 1, got {}", plan.sparse_fraction));
    if (plan.parameter_server() && plan.local_steps > 1)
        p.fail("local_steps", "parameter servers exchange every step (local_steps must be 1)");
    // One graph, or a schedule of them separated by commas (round r on the (r mod count)-th).
    plan.graphs.clear();
    const std::string& schedule = p.string("gossip_graph");
    for (std::string name : engine::split_list(schedule)) {
        name.erase(0, name.find_first_not_of(' '));
        name.erase(name.find_last_not_of(' ') + 1);
        const auto graph = parse_gossip_graph(name);
        if (!graph)
            p.fail("gossip_graph", fmt::format("unknown graph '{}' in \"{}\" (known: {}; a schedule: names separated "
                                               "by commas)",
                                               name, schedule, gossip_graph_names()));
        plan.graphs.push_back(*graph);
    }
    plan.averaging_group = static_cast<std::uint32_t>(integer_in(p, "averaging_group", 0, 1 << 20));
    plan.global_every = static_cast<std::uint32_t>(integer_in(p, "global_every", 1, 10'000));
    if (plan.averaging_group > 0) {
        if (plan.averaging != Averaging::allreduce || plan.local_steps < 2)
            p.fail("averaging_group",
                   "hierarchical averaging applies to local SGD: averaging: allreduce and "
                   "local_steps of 2 or more");
        if (plan.dp % plan.averaging_group != 0)
            p.fail("averaging_group",
                   fmt::format("groups of {} do not split dp = {} ranks", plan.averaging_group, plan.dp));
        if (plan.global_every < 2)
            p.fail("global_every",
                   "expected 2 or more with averaging_group (1: every round over all ranks, as "
                   "without groups)");
    }
    plan.clients_per_round = static_cast<std::uint32_t>(integer_in(p, "clients_per_round", 0, 1 << 20));
    if (plan.sampling()) {
        if (plan.clients_per_round > plan.dp)
            p.fail("clients_per_round",
                   fmt::format("{} clients per round, but dp is {}", plan.clients_per_round, plan.dp));
        if (plan.averaging != Averaging::allreduce || plan.offload || plan.averaging_group > 0 || plan.compression.on())
            p.fail("clients_per_round",
                   "federated rounds average with one all-reduce of the round's clients: "
                   "averaging: allreduce, without offload, averaging_group or compression");
        if (plan.steps % plan.local_steps != 0)
            p.fail("steps", fmt::format("federated rounds need whole rounds: {} steps are not a multiple of "
                                        "local_steps = {}",
                                        plan.steps, plan.local_steps));
    }
    read_deadline(p, plan);
    if (plan.averaging_group == 0 && plan.global_every > 1)
        p.fail("global_every", "global_every needs averaging_group (the groups that average in between)");
    plan.seed = static_cast<std::uint64_t>(p.integer("seed"));
    if (plan.compression.on() && plan.local_steps > 1 && !plan.gossip())
        p.fail("compression",
               "compression applies to the gradient buckets, which local SGD (local_steps > 1) does "
               "not send");
    plan.compression.error_feedback = p.boolean("error_feedback");
    const std::string& optimizer = p.string("optimizer");
    if (optimizer != "sgd" && optimizer != "adam")
        p.fail("optimizer", fmt::format("unknown optimizer '{}' (known: sgd, adam)", optimizer));
    plan.adam = optimizer == "adam";
    read_pipeline(p, plan);
    read_model_parallel(p, plan);
    return plan;
}

}  // namespace

OpId LayerBuilder::compute(const std::string& name, traces::KernelClass cls, double flops, double bytes,
                           std::uint32_t shape, std::vector<OpId> deps) {
    traces::Op op{compute_, g_.intern(name), OpKind::compute, cls, plan_.dtype};
    op.set_flops(flops);
    op.set_bytes(engine::saturated_bytes(bytes));
    op.set_shape(shape);
    last_compute_ = g_.add(op, deps);
    return last_compute_;
}

OpId LayerBuilder::layer_forward(const std::string& tag, std::size_t l, double samples, std::vector<OpId> deps,
                                 OpId* gemm) {
    const LayerSpec& layer = plan_.model.layers[l];
    const double width = traces::data_type_size(plan_.dtype);
    // A model-parallel layer computes its 1/mp of the neurons for the group's mp x batch samples: the same work, a
    // share of the parameters.
    const double params = static_cast<double>(layer.params) / (plan_.model_parallel(l) ? plan_.mp : 1);
    memory(OpKind::alloc, traces::MemoryUse::activations, width * samples * layer.activations, layer.name);
    // Bytes: the weights, and the layer's output (its input is the previous output, counted there).
    OpId at = compute(fmt::format("{} forward {}", tag, layer.name), traces::KernelClass::gemm,
                      samples * layer.forward_flops, width * (params + samples * layer.activations), shapes_[l], deps);
    if (gemm) *gemm = at;
    // Batch norm (read, write) and ReLU in place (read, write) on the output.
    if (layer.norm)
        at = compute(fmt::format("{} forward {} norm", tag, layer.name), traces::KernelClass::elementwise, 0,
                     4 * width * samples * layer.activations, traces::no_shape, {at});
    return at;
}

OpId LayerBuilder::layer_backward(const std::string& tag, std::size_t l, double samples, std::vector<OpId> deps) {
    const LayerSpec& layer = plan_.model.layers[l];
    const double width = traces::data_type_size(plan_.dtype);
    const double params = static_cast<double>(layer.params) / (plan_.model_parallel(l) ? plan_.mp : 1);
    // ReLU's and batch norm's backward: read the output gradient and the saved tensors, write the input gradient.
    if (layer.norm)
        deps = {compute(fmt::format("{} backward {} norm", tag, layer.name), traces::KernelClass::elementwise, 0,
                        6 * width * samples * layer.activations, traces::no_shape, deps)};
    const OpId gemm = compute(fmt::format("{} backward {}", tag, layer.name), traces::KernelClass::gemm,
                              2 * samples * layer.forward_flops,
                              width * (2.0 * params + 2.0 * samples * layer.activations), shapes_[l], deps);
    memory(OpKind::free, traces::MemoryUse::activations, width * samples * layer.activations, layer.name);
    return gemm;
}

OpId LayerBuilder::collective(CollectiveKind kind, double bytes, const std::string& name, std::vector<OpId> deps,
                              traces::CommId comm) {
    traces::Op op{dp_, g_.intern(name), OpKind::collective, traces::KernelClass::communication, plan_.grad_dtype};
    op.collective = kind;
    op.set_bytes(engine::saturated_bytes(bytes));
    op.set_comm(comm.valid() ? comm : world_);
    return g_.add(op, deps);
}

void LayerBuilder::memory(OpKind kind, traces::MemoryUse use, double bytes, const std::string& name) {
    traces::Op op{compute_, g_.intern(fmt::format("{} {}", kind == OpKind::alloc ? "alloc" : "free", name)), kind,
                  traces::KernelClass::other, plan_.dtype};
    op.set_bytes(engine::saturated_bytes(bytes));
    op.set_memory(use);
    g_.add(op);
}

void LayerBuilder::build_rank() {
    const auto& layers = plan_.model.layers;
    const double width = traces::data_type_size(plan_.dtype), grad_width = traces::data_type_size(plan_.grad_dtype);
    const double batch = static_cast<double>(plan_.batch);
    // The parameters this rank holds: a share of each model-parallel layer's.
    double params = 0;
    for (std::size_t l = 0; l < layers.size(); ++l)
        params += static_cast<double>(layers[l].params) / (plan_.model_parallel(l) ? plan_.mp : 1);
    // Offloaded, the GPU keeps the parameters in the kernels' datatype; the fp32 master copy is on the host.
    memory(OpKind::alloc, traces::MemoryUse::parameters, (plan_.offload ? width : 4) * params, "parameters");
    memory(OpKind::alloc, traces::MemoryUse::gradients, grad_width * params, "gradients");
    if (!plan_.parameter_server() && !plan_.offload)  // the servers or the host hold it
        memory(OpKind::alloc, traces::MemoryUse::optimizer_state, (plan_.adam ? 8 : 4) * params, "optimizer state");
    if (plan_.compression.error_feedback && plan_.compression.on())
        memory(OpKind::alloc, traces::MemoryUse::buffers, grad_width * params, "error-feedback residual");
    std::vector<OpId> next;                 // what the next step's first forward waits for
    const double model_bytes = 4 * params;  // fp32 parameters, as averaged
    for (std::uint32_t step = 0; step < plan_.steps; ++step) {
        const std::uint32_t round = step / plan_.local_steps;
        if (plan_.sampling() && !is_client(round, rank_.value)) continue;  // sits this round out
        if (plan_.sampling() && step % plan_.local_steps == 0) {
            round_first_op_ = UINT32_MAX;  // the model's download if it has one, else its first kernel
            const auto& moves = moves_by_receiver_[round];
            const auto in = std::lower_bound(moves.begin(), moves.end(), rank_.value,
                                             [](const ModelMove& m, std::uint32_t r) { return m.to < r; });
            if (in != moves.end() && in->to == rank_.value)
                next = {p2p(OpKind::recv, "model", in->from, model_bytes,
                            fmt::format("round{} model from rank {}", round, in->from), next)};
        }
        std::vector<OpId> deps = next;
        if (!next.empty() && g_.ops[next.front().index()].kind == OpKind::recv) round_first_op_ = next.front().value;
        for (std::size_t l = 0; l < layers.size(); ++l) {
            if (plan_.model_parallel(l)) deps = gather_into(step, l, deps);
            OpId gemm;
            deps = {layer_forward(fmt::format("step{}", step), l, batch, deps, &gemm)};
            if (l == 0 && round_first_op_ == UINT32_MAX) round_first_op_ = gemm.value;
        }
        const bool reduce = plan_.local_steps == 1 && plan_.averaging == Averaging::allreduce && !plan_.sampling();
        bucket_ = 0;
        bucket_index_ = 0;
        reductions_.clear();
        uploads_.clear();
        OpId last;
        for (std::size_t l = layers.size(); l-- > 0;) {
            last = layer_backward(fmt::format("step{}", step), l, batch, deps);
            deps = plan_.model_parallel(l) ? exchange_input_gradients(step, l, last) : std::vector<OpId>{last};
            const double layer_params =
                static_cast<double>(layers[l].params) / (plan_.model_parallel(l) ? plan_.mp : 1);
            if (reduce)
                add_to_bucket(step, grad_width * layer_params, last, l == 0,
                              plan_.model_parallel(l) ? mp_shards_[rank_.value % plan_.mp] : traces::CommId{});
        }
        if (plan_.parameter_server()) {
            next = push_and_pull(step, last);  // the servers run the optimizer
            continue;
        }
        if (plan_.offload) {
            next = uploads_;  // the host ran the optimizer, bucket by bucket
            next.push_back(last);
            continue;
        }
        emit_decodes();
        std::vector<OpId> before_optimizer{last};
        before_optimizer.insert(before_optimizer.end(), reductions_.begin(), reductions_.end());
        // SGD with momentum reads weight, gradient and momentum and writes weight and momentum (fp32); Adam two
        // moments.
        const double optimizer_bytes = params * (plan_.adam ? 28.0 : 20.0);
        OpId step_done = compute(fmt::format("step{} optimizer", step), traces::KernelClass::optimizer, 0,
                                 optimizer_bytes, traces::no_shape, before_optimizer);
        if (plan_.sampling() && (step + 1) % plan_.local_steps == 0) {
            if (plan_.round_deadline_s >= 0)
                g_.training.client_rounds.push_back({round, rank_.value, round_first_op_, step_done.value});
            if (!on_time(round, rank_.value)) {
                // Past the deadline: the round's average went on without this client, whose update is dropped.
                traces::Op late{compute_, g_.intern(fmt::format("round{} update dropped", round)), OpKind::delay,
                                traces::KernelClass::other, plan_.dtype};
                next = {g_.add(late, std::vector<OpId>{step_done}, engine::Time{0})};
                continue;
            }
            // The round's clients average; each then sends the model to the next round's newcomers it serves.
            step_done = collective(CollectiveKind::all_reduce, model_bytes, fmt::format("round{} average", round),
                                   {step_done}, round_comms_[round]);
            if (round + 1 < clients_.size()) {
                const auto& moves = moves_by_sender_[round + 1];
                auto out = std::lower_bound(moves.begin(), moves.end(), rank_.value,
                                            [](const ModelMove& m, std::uint32_t r) { return m.from < r; });
                for (; out != moves.end() && out->from == rank_.value; ++out)
                    (void)p2p(OpKind::send, "model", out->to, model_bytes,
                              fmt::format("round{} model to rank {}", round + 1, out->to), {step_done});
            }
        } else if (!reduce && plan_.dp > 1 && (step + 1) % plan_.local_steps == 0) {
            if (plan_.gossip()) {
                step_done = gossip_round(step, round, step_done);
            } else {
                // Hierarchical: within the rank's group, and over all ranks every global_every-th round.
                // (round + 1: the rounds done with this one, every global_every-th of them global.)
                const bool in_group = plan_.averaging_group > 0 && (round + 1) % plan_.global_every != 0;
                step_done =
                    collective(CollectiveKind::all_reduce, model_bytes,
                               fmt::format("step{} average parameters{}", step, in_group ? " in group" : ""),
                               {step_done}, in_group ? groups_[rank_.value / plan_.averaging_group] : traces::CommId{});
            }
        }
        next = {step_done};
    }
}

OpGraph LayerBuilder::build() {
    const auto& layers = plan_.model.layers;
    g_.rank_count = plan_.ranks();
    g_.source =
        fmt::format("layers generator ({}, dp={}, batch {} per GPU{}{}{})", plan_.model.name, plan_.dp, plan_.batch,
                    plan_.local_steps > 1
                        ? fmt::format(", local SGD H={}{}", plan_.local_steps,
                                      plan_.averaging_group > 0 ? fmt::format(" in groups of {}, global every {}",
                                                                              plan_.averaging_group, plan_.global_every)
                                                                : "")
                        : "",
                    plan_.compression.on() ? fmt::format(", compressed to {}", plan_.compression.ratio) : "",
                    plan_.gossip()             ? ", gossip"
                    : plan_.parameter_server() ? fmt::format(", {} parameter servers", plan_.servers)
                                               : std::string{});
    for (const LayerSpec& l : layers) {
        if (l.gemm_m == 0) {
            shapes_.push_back(traces::no_shape);
            continue;
        }
        // A micro-batch's samples; a model-parallel layer's GEMM has the group's samples and its share of N.
        const bool split = plan_.model_parallel(shapes_.size());
        const std::uint64_t kernel_batch = plan_.batch / plan_.microbatches * (split ? plan_.mp : 1);
        const std::uint64_t m = std::min<std::uint64_t>(l.gemm_m * kernel_batch, UINT32_MAX);
        const std::uint32_t n = split ? std::max<std::uint32_t>(1, l.gemm_n / plan_.mp) : l.gemm_n;
        shapes_.push_back(g_.intern(traces::GemmShape{static_cast<std::uint32_t>(m), n, l.gemm_k, 1}));
    }
    if (plan_.pipelined()) return build_pipeline();
    std::vector<RankId> all;
    for (std::uint32_t r = 0; r < plan_.dp; ++r) all.push_back(RankId{r});
    if (plan_.dp > 1 && plan_.averaging == Averaging::allreduce) world_ = g_.communicator("dp", all);
    for (std::uint32_t k = 0; plan_.averaging_group > 0 && k < plan_.dp / plan_.averaging_group; ++k) {
        const auto first = all.begin() + static_cast<std::ptrdiff_t>(k * plan_.averaging_group);
        groups_.push_back(
            g_.communicator(fmt::format("dp group {}", k), std::vector<RankId>(first, first + plan_.averaging_group)));
    }
    if (plan_.parameter_server()) {
        std::vector<RankId> everyone;
        for (std::uint32_t r = 0; r < plan_.ranks(); ++r) everyone.push_back(RankId{r});
        p2p_comm_ = g_.communicator("ps", everyone);
        pulls_.assign(plan_.steps, {});
    }
    if (plan_.sampling()) {
        // Each round's clients: the first clients_per_round of a seeded shuffle of the ranks, in rank order.
        p2p_comm_ = g_.communicator("fedavg", all);
        for (std::uint32_t q = 0; q < plan_.steps / plan_.local_steps; ++q) {
            std::vector<std::uint32_t> order = seeded_permutation(plan_.dp, plan_.seed, q);
            order.resize(plan_.clients_per_round);
            std::sort(order.begin(), order.end());
            clients_.push_back(std::move(order));
            std::vector<RankId> members;
            for (const std::uint32_t r : clients_.back())
                if (on_time(q, r)) members.push_back(RankId{r});
            if (members.empty())
                throw engine::InputError(
                    engine::SourceLocation{"workload"},
                    fmt::format("round {}: every client missed the deadline ({} s): a later round_deadline", q,
                                plan_.round_deadline_s));
            round_comms_.push_back(g_.communicator(fmt::format("round {}", q), members));
        }
        plan_model_moves();
    }
    if (plan_.dp > 1 && plan_.gossip()) {
        p2p_comm_ = g_.communicator("gossip", all);
        for (std::uint32_t r = 0; r < plan_.steps / plan_.local_steps; ++r) {
            sends_.push_back(gossip_peers(plan_.graphs[r % plan_.graphs.size()], plan_.dp, r, plan_.seed));
            sources_.push_back(gossip_sources(sends_.back()));
        }
    }
    make_model_parallel_groups();
    for (std::uint32_t r = 0; r < plan_.dp; ++r) {
        rank_ = RankId{r};
        compute_ = g_.stream(rank_, "compute");
        mp_ = plan_.mp > 1 ? g_.stream(rank_, "mp") : traces::StreamId::invalid();
        dp_ = plan_.dp > 1 && plan_.averaging == Averaging::allreduce ? g_.stream(rank_, "dp")
                                                                      : traces::StreamId::invalid();
        build_rank();
    }
    for (std::uint32_t s = 0; s < (plan_.parameter_server() ? plan_.servers : 0); ++s) {
        rank_ = RankId{plan_.dp + s};
        compute_ = g_.stream(rank_, "compute");
        build_server();
    }
    return finish();
}

OpGraph LayerBuilder::finish() {
    if (!plan_.drops_given) g_.training.round_deadline_s = plan_.round_deadline_s;
    g_.training.model_flops = 3 * plan_.model.forward_flops() * static_cast<double>(plan_.batch) *
                              (plan_.sampling() ? plan_.clients_per_round : plan_.dp) * plan_.steps;
    g_.training.dtype = plan_.dtype;
    return std::move(g_);
}

OpGraph LayerBuilder::build_pipeline() {
    // Rank = replica x pp + stage; a data-parallel group per stage; point-to-point between neighbouring stages.
    std::vector<RankId> everyone;
    for (std::uint32_t r = 0; r < plan_.ranks(); ++r) everyone.push_back(RankId{r});
    if (plan_.pp > 1) p2p_comm_ = g_.communicator("pp", everyone);
    for (std::uint32_t s = 0; s < plan_.pp && plan_.dp > 1; ++s) {
        std::vector<RankId> members;
        for (std::uint32_t d = 0; d < plan_.dp; ++d) members.push_back(RankId{d * plan_.pp + s});
        stage_dp_.push_back(g_.communicator(plan_.pp > 1 ? fmt::format("dp.stage{}", s) : "dp", members));
    }
    for (std::uint32_t r = 0; r < plan_.ranks(); ++r) {
        rank_ = RankId{r};
        compute_ = g_.stream(rank_, "compute");
        dp_ = plan_.dp > 1 ? g_.stream(rank_, "dp") : traces::StreamId::invalid();
        world_ = plan_.dp > 1 ? stage_dp_[r % plan_.pp] : traces::CommId{};
        build_pipeline_rank();
        if (plan_.pp > 1) g_.rank_stage.push_back(r % plan_.pp);
    }
    for (std::uint32_t s = 0; s < plan_.pp; ++s)
        g_.derived.push_back(fmt::format("stage {} layers: {}-{}", s, plan_.model.layers[plan_.stage_first[s]].name,
                                         plan_.model.layers[plan_.stage_first[s + 1] - 1].name));
    return finish();
}

void LayerBuilder::add_to_bucket(std::uint32_t step, double grad_bytes, OpId after, bool first_layer,
                                 traces::CommId comm) {
    // A bucket holds gradients reduced over one group: the model-parallel layers' close before the others'.
    if (bucket_ > 0 && comm != bucket_comm_) {
        reduce_bucket(step, bucket_, bucket_after_, bucket_comm_);
        bucket_ = 0;
    }
    bucket_comm_ = comm;
    bucket_after_ = after;
    bucket_ += grad_bytes;
    const double cap = bucket_index_ == 0 ? plan_.first_bucket_bytes : plan_.bucket_bytes;
    if (bucket_ < cap && !first_layer) return;
    if (bucket_ > 0 && plan_.offload) {
        offload_bucket(step, bucket_, after);
    } else if (bucket_ > 0) {
        reduce_bucket(step, bucket_, after, comm);
    }
    bucket_ = 0;
}

std::uint64_t layer_data_parallel_ranks(const engine::Params& params) {
    const std::uint64_t dp = integer_in(params, "dp", 1, 1 << 20) * integer_in(params, "pp", 1, 1 << 12);
    return params.string("averaging") == "parameter_server" ? dp + integer_in(params, "servers", 1, 1 << 16) : dp;
}

OpGraph build_layer_data_parallel(const engine::Params& params) {
    const LayerPlan plan = read_plan(params);
    // Per rank and step: an alloc, a forward, a backward, two norms and a free per layer, a few ops per bucket.
    const double ops = double(plan.dp) * plan.steps *
                       (6.0 * double(plan.model.layers.size()) * plan.microbatches + 8.0 * plan.pp +
                        (plan.gossip() ? 80.0 : 0.0) + 4.0 * plan.servers);
    engine::require_memory(ops * 200.0, fmt::format("the layers plan ({:.3g} ops)", ops), "fewer steps or dp",
                           params.location("dp").file);
    return LayerBuilder(plan).build();
}

}  // namespace clustersim::workloads
