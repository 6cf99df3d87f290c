// The dlrm generator: a deep learning recommendation model (Naumov et al. 2019, facebookresearch/dlrm) trained on
// `ranks` GPUs: the MLPs data parallel, the embedding tables sharded (model parallel).
//
// Per rank and step, stream "compute": the lookups of its shard for the whole global batch (memory-bound: every
// looked-up row is read), the bottom MLP (overlapping the exchange), the pairwise-dot interaction, the top MLP, and
// backward the same in reverse: the top MLP, the interaction, the bottom MLP, then the sparse update of its shard
// (every touched row read and written). Stream "exchange": the pooled embeddings to the ranks whose samples they
// belong to, and their gradients back:
//   table-wise (each table on one rank, largest first onto the least loaded): an all-to-all of each owned table's
//     pooled vectors for every other rank's local batch, and the same backward;
//   row-wise (each table's rows split over all ranks): partial sums of every table for the global batch, reduced
//     and scattered to the owners of the samples (reduce-scatter), and gathered back backward (all-gather);
//   column-wise (each table's columns split over all ranks): an all-to-all of each rank's slice of every table.
// Stream "dp": the MLPs' gradients all-reduced (top as soon as its backward is done, then bottom), then the dense
// optimizer step. Memory: the shard of the tables, the MLPs' parameters, gradients and momentum.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "engine/memory_budget.h"
#include "engine/units.h"
#include "workloads/compression.h"
#include "workloads/workload_registry.h"

namespace clustersim::workloads {

using traces::CollectiveKind;
using traces::OpGraph;
using traces::OpId;
using traces::OpKind;
using traces::RankId;

namespace {

// facebookresearch/dlrm's Criteo Kaggle configuration (--arch-embedding-size, --arch-mlp-bot 13-512-256-64-16,
// --arch-mlp-top 512-256-1, --arch-sparse-feature-size 16).
constexpr const char* kaggle_rows =
    "1460-583-10131227-2202608-305-24-12517-633-3-93145-5683-8351593-3194-27-14992-5461306-10-5652-2173-4-7046547-"
    "18-15-286181-105-142572";

// facebookresearch/dlrm's Criteo Terabyte configuration (dlrm_s_pytorch.py with --max-ind-range=40000000, as
// bench/run_and_time.sh runs it: --arch-sparse-feature-size 128, --arch-mlp-bot 13-512-256-128, --arch-mlp-top
// 1024-1024-512-256-1): the 26 tables hashed to at most 40 M rows.
constexpr const char* terabyte_rows =
    "39884406-39043-17289-7420-20263-3-7120-1543-63-38532951-2953546-403346-10-2208-11938-155-4-976-14-39979771-"
    "25641295-39664984-585935-12972-108-36";

/// A model preset: the values of table_rows, dim, bottom_mlp and top_mlp that the plan does not give.
struct DlrmModel {
    const char* name;
    const char* rows;
    const char* dim;
    const char* bottom;
    const char* top;
};
constexpr DlrmModel dlrm_models[] = {
    {"kaggle", kaggle_rows, "16", "13-512-256-64-16", "512-256-1"},
    {"terabyte", terabyte_rows, "128", "13-512-256-128", "1024-1024-512-256-1"},
};

enum class Sharding : std::uint8_t { table, row, column };
constexpr engine::NameTable<Sharding, 3> sharding_names{
    {{Sharding::table, "table"}, {Sharding::row, "row"}, {Sharding::column, "column"}}};

struct DlrmPlan {
    std::vector<std::uint64_t> rows;  // per table
    std::vector<std::uint32_t> bottom, top;
    std::uint32_t dim = 16, ranks = 8, steps = 1;
    double pooling = 1;
    std::uint64_t batch = 2048;  // per GPU
    Sharding sharding = Sharding::table;
    traces::DataType dtype = traces::DataType::fp32;
    bool pipeline_lookups = false;  // the next step's lookups and exchange before this step's backward ends
    double exchange_ratio = 1;      // quantized exchange: bytes sent over the uncompressed (1: not quantized)
};

std::vector<std::uint64_t> dashed(const engine::Params& p, const char* key, std::uint64_t max) {
    std::vector<std::uint64_t> out;
    const std::string& text = p.string(key);
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t end = std::min(text.find('-', at), text.size());
        const std::string item = text.substr(at, end - at);
        std::uint64_t v = 0;
        bool ok = !item.empty() && item.size() <= 18;
        for (const char c : item) ok = ok && c >= '0' && c <= '9';
        if (ok) v = std::stoull(item);
        if (!ok || v < 1 || v > max)
            p.fail(key, fmt::format("expected sizes from 1 to {} joined by '-', got '{}'", max, text));
        out.push_back(v);
        at = end + 1;
    }
    if (out.size() > 100'000) p.fail(key, "more than 100,000 entries");
    return out;
}

DlrmPlan read_plan(const engine::Params& given) {
    // The model preset fills what the plan leaves at its default.
    engine::Params p = given;
    const DlrmModel* model = nullptr;
    for (const DlrmModel& m : dlrm_models)
        if (p.string("model") == m.name) model = &m;
    if (!model) p.fail("model", fmt::format("unknown DLRM model '{}' (known: kaggle, terabyte)", p.string("model")));
    const std::pair<const char*, const char*> fills[] = {
        {"table_rows", model->rows}, {"dim", model->dim}, {"bottom_mlp", model->bottom}, {"top_mlp", model->top}};
    for (const auto& [key, value] : fills)
        if (p.location(key).file == "(default)") p.set(key, value);
    DlrmPlan plan;
    plan.rows = dashed(p, "table_rows", std::uint64_t{1} << 40);
    plan.bottom.clear();
    for (const auto v : dashed(p, "bottom_mlp", 1 << 20)) plan.bottom.push_back(static_cast<std::uint32_t>(v));
    for (const auto v : dashed(p, "top_mlp", 1 << 20)) plan.top.push_back(static_cast<std::uint32_t>(v));
    if (plan.bottom.size() < 2) p.fail("bottom_mlp", "expected the input size and at least one layer");
    plan.dim = static_cast<std::uint32_t>(p.integer_in("dim", 1, 1 << 16));
    if (plan.bottom.back() != plan.dim)
        p.fail("bottom_mlp", fmt::format("the bottom MLP ends at {}, not at the embedding dim {} the interaction needs",
                                         plan.bottom.back(), plan.dim));
    plan.ranks = static_cast<std::uint32_t>(p.integer_in("ranks", 1, 1 << 16));
    plan.steps = static_cast<std::uint32_t>(p.integer_in("steps", 1, 10'000));
    plan.batch = static_cast<std::uint64_t>(p.integer_in("batch_per_gpu", 1, 1 << 24));
    plan.pooling = p.number("pooling");
    if (!(plan.pooling > 0) || plan.pooling > 1e4)
        p.fail("pooling",
               fmt::format("expected lookups per table and sample above 0 and up to 1e4, got {}", plan.pooling));
    plan.sharding = engine::choose(p, "sharding", sharding_names, "sharding");
    if (plan.sharding == Sharding::column && plan.dim % plan.ranks != 0)
        p.fail("sharding",
               fmt::format("column-wise sharding splits dim {} over {} ranks: it must divide", plan.dim, plan.ranks));
    const auto dtype = traces::parse_data_type(p.string("dtype"));
    if (!dtype) p.fail("dtype", fmt::format("unknown datatype '{}'", p.string("dtype")));
    plan.dtype = *dtype;
    plan.pipeline_lookups = p.boolean("pipeline_lookups");
    const Compression exchange = read_compression(p, "exchange_compression", "exchange_compression_ratio");
    if (exchange.codec != Codec::none && exchange.codec != Codec::quantize)
        p.fail("exchange_compression",
               "the pooled embeddings and their gradients are quantized (TorchRec's quantized communication): none "
               "or quantize");
    if (exchange.on()) plan.exchange_ratio = exchange.ratio;
    if (plan.pipeline_lookups && plan.steps < 2)
        p.fail("pipeline_lookups", "overlaps the next step's embedding lookups with this step: it needs steps >= 2");
    return plan;
}

/// Table-wise placement: largest table first onto the rank with the fewest rows so far (then the lowest rank).
std::vector<std::uint32_t> place_tables(const DlrmPlan& plan) {
    std::vector<std::uint32_t> order(plan.rows.size()), owner(plan.rows.size());
    std::iota(order.begin(), order.end(), 0U);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return plan.rows[a] > plan.rows[b]; });
    std::vector<std::uint64_t> load(plan.ranks, 0);
    for (const std::uint32_t t : order) {
        const auto r = static_cast<std::uint32_t>(std::min_element(load.begin(), load.end()) - load.begin());
        owner[t] = r;
        load[r] += plan.rows[t];
    }
    return owner;
}

double mlp_flops(const std::vector<std::uint32_t>& sizes, double batch) {
    double f = 0;
    for (std::size_t i = 0; i + 1 < sizes.size(); ++i) f += 2.0 * batch * sizes[i] * sizes[i + 1];
    return f;
}

double mlp_params(const std::vector<std::uint32_t>& sizes) {
    double n = 0;
    for (std::size_t i = 0; i + 1 < sizes.size(); ++i) n += double(sizes[i]) * sizes[i + 1] + sizes[i + 1];
    return n;
}

}  // namespace

std::uint64_t dlrm_ranks(const engine::Params& params) {
    return static_cast<std::uint64_t>(params.integer_in("ranks", 1, 1 << 16));
}

OpGraph build_dlrm(const engine::Params& params) {
    const DlrmPlan plan = read_plan(params);
    const double ops = double(plan.ranks) * plan.steps * 24.0;
    engine::require_memory(ops * 200.0, fmt::format("the dlrm plan ({:.3g} ops)", ops), "fewer steps or ranks",
                           params.location("ranks").file);
    const std::uint32_t n = plan.ranks, tables = static_cast<std::uint32_t>(plan.rows.size());
    const double width = traces::data_type_size(plan.dtype), dim = plan.dim;
    const double local = static_cast<double>(plan.batch), global = local * n;
    // The top MLP's input: the bottom output and one dot product per pair of the tables' and the bottom's vectors.
    std::vector<std::uint32_t> top{plan.dim + (tables + 1) * tables / 2};
    top.insert(top.end(), plan.top.begin(), plan.top.end());
    const double interaction_flops = local * (tables + 1.0) * tables * dim;  // (T+1)T/2 dots of 2 x dim FLOPs
    const double dense_params = mlp_params(plan.bottom) + mlp_params(top);
    const std::vector<std::uint32_t> owner = place_tables(plan);

    OpGraph g;
    g.rank_count = n;
    g.source = fmt::format("dlrm generator ({} tables of dim {}, {} ranks, {}-wise sharding, batch {} per GPU)", tables,
                           plan.dim, n, engine::enum_name(sharding_names, plan.sharding), plan.batch);
    std::vector<RankId> all;
    for (std::uint32_t r = 0; r < n; ++r) all.push_back(RankId{r});
    const traces::CommId world = n > 1 ? g.communicator("world", all) : traces::CommId{};
    for (std::uint32_t r = 0; r < n; ++r) {
        const RankId rank{r};
        const auto compute = g.stream(rank, "compute");
        const auto exchange = n > 1 ? g.stream(rank, "exchange") : traces::StreamId::invalid();
        const auto dp = n > 1 ? g.stream(rank, "dp") : traces::StreamId::invalid();
        // This rank's share of the tables: rows held, and vectors looked up for the global batch.
        double rows_held = 0, looked_up = 0;  // rows x dim elements; lookups x columns
        for (std::uint32_t t = 0; t < tables; ++t) {
            const double rows = static_cast<double>(plan.rows[t]);
            switch (plan.sharding) {
                case Sharding::table:
                    if (owner[t] == r) {
                        rows_held += rows * dim;
                        looked_up += global * plan.pooling * dim;
                    }
                    break;
                case Sharding::row:
                    rows_held += rows / n * dim;
                    looked_up += global * plan.pooling / n * dim;
                    break;
                case Sharding::column:
                    rows_held += rows * dim / n;
                    looked_up += global * plan.pooling * dim / n;
                    break;
            }
        }
        const double owned_tables = static_cast<double>(std::count(owner.begin(), owner.end(), r));
        // What the exchange moves per rank (collective op bytes: all_to_all sends, reduce_scatter's buffer).
        double exchanged = 0;
        CollectiveKind forward_kind = CollectiveKind::all_to_all, backward_kind = CollectiveKind::all_to_all;
        if (plan.sharding == Sharding::table) {
            exchanged = owned_tables * local * (n - 1) * dim * width;
        } else if (plan.sharding == Sharding::row) {
            exchanged = tables * global * dim * width;
            forward_kind = CollectiveKind::reduce_scatter;
            backward_kind = CollectiveKind::all_gather;
        } else {
            exchanged = tables * local * (n - 1) * dim / n * width;
        }
        auto op_of = [&](traces::StreamId stream, const std::string& name, OpKind kind, traces::KernelClass cls) {
            return traces::Op{stream, g.intern(name), kind, cls, plan.dtype};
        };
        auto kernel = [&](const std::string& name, traces::KernelClass cls, double flops, double bytes,
                          std::vector<OpId> deps) {
            traces::Op op = op_of(compute, name, OpKind::compute, cls);
            op.set_flops(flops);
            op.set_bytes(engine::saturated_bytes(bytes));
            return g.add(op, deps);
        };
        auto collective = [&](traces::StreamId stream, const std::string& name, CollectiveKind kind, double bytes,
                              std::vector<OpId> deps) {
            traces::Op op = op_of(stream, name, OpKind::collective, traces::KernelClass::communication);
            op.collective = kind;
            // all_gather ops carry each rank's contribution: the backward's is the reduce-scatter's share.
            op.set_bytes(engine::saturated_bytes(kind == CollectiveKind::all_gather ? bytes / n : bytes));
            op.set_comm(world);
            return g.add(op, deps);
        };
        auto memory = [&](traces::MemoryUse use, double bytes, const char* name) {
            traces::Op op = op_of(compute, fmt::format("alloc {}", name), OpKind::alloc, traces::KernelClass::other);
            op.set_bytes(engine::saturated_bytes(bytes));
            op.set_memory(use);
            g.add(op);
        };
        memory(traces::MemoryUse::parameters, rows_held * width + 4 * dense_params, "embedding shard and MLPs");
        memory(traces::MemoryUse::gradients, 4 * dense_params, "MLP gradients");
        memory(traces::MemoryUse::optimizer_state, 4 * dense_params, "MLP momentum");
        // Lookups read every looked-up vector and write the pooled (or partial) outputs.
        const double pooled_out = (plan.sharding == Sharding::table ? owned_tables : tables) * global * dim * width /
                                  (plan.sharding == Sharding::column ? n : 1);
        // Quantized exchange (TorchRec's qcomms): a cast before each exchange and one back after, both memory-bound.
        const bool quantized = plan.exchange_ratio < 1 && n > 1;
        auto dequantize = [&](const std::string& name, OpId after) {
            return quantized ? kernel(name, traces::KernelClass::elementwise, 0, exchanged * (1 + plan.exchange_ratio),
                                      {after})
                             : after;
        };
        // A step's lookups and the forward exchange of what they pooled; returns the lookup and the exchange.
        auto look_up = [&](std::uint32_t s, std::vector<OpId> deps) {
            const std::string tag = fmt::format("step{} ", s);
            const OpId lookup = kernel(tag + "embedding lookup", traces::KernelClass::embedding, 0,
                                       looked_up * width + pooled_out, std::move(deps));
            if (n == 1) return std::pair{lookup, lookup};
            const OpId ready = quantized ? kernel(tag + "quantize embeddings", traces::KernelClass::elementwise, 0,
                                                  pooled_out * (1 + plan.exchange_ratio), {lookup})
                                         : lookup;
            const OpId sent = collective(exchange, tag + "embedding exchange", forward_kind,
                                         exchanged * plan.exchange_ratio, {ready});
            return std::pair{lookup, sent};
        };
        OpId step_done;
        std::pair<OpId, OpId> next;  // with pipelining: the next step's lookup and exchange, issued early
        for (std::uint32_t s = 0; s < plan.steps; ++s) {
            const std::string tag = fmt::format("step{} ", s);
            std::vector<OpId> start;
            if (step_done.valid()) start.push_back(step_done);
            const auto [lookup, exchanged_fwd] = next.first.valid() ? next : look_up(s, start);
            next = {};
            const OpId bottom = kernel(tag + "bottom MLP", traces::KernelClass::gemm, mlp_flops(plan.bottom, local),
                                       4 * mlp_params(plan.bottom) + width * local * plan.bottom.front(), {lookup});
            const OpId received =
                exchanged_fwd == lookup ? lookup : dequantize(tag + "dequantize embeddings", exchanged_fwd);
            const OpId interact = kernel(tag + "interaction", traces::KernelClass::gemm, interaction_flops,
                                         width * local * ((tables + 1.0) * dim + top.front()), {bottom, received});
            const OpId top_fwd = kernel(tag + "top MLP", traces::KernelClass::gemm, mlp_flops(top, local),
                                        4 * mlp_params(top) + width * local * top.front(), {interact});
            const OpId top_bwd = kernel(tag + "top MLP backward", traces::KernelClass::gemm, 2 * mlp_flops(top, local),
                                        8 * mlp_params(top) + 2 * width * local * top.front(), {top_fwd});
            const OpId top_grads = n > 1 ? collective(dp, tag + "all-reduce top MLP grads", CollectiveKind::all_reduce,
                                                      4 * mlp_params(top), {top_bwd})
                                         : top_bwd;
            const OpId interact_bwd =
                kernel(tag + "interaction backward", traces::KernelClass::gemm, 2 * interaction_flops,
                       2 * width * local * ((tables + 1.0) * dim + top.front()), {top_bwd});
            OpId exchanged_bwd = interact_bwd;
            if (n > 1) {
                const OpId ready = quantized
                                       ? kernel(tag + "quantize embedding gradients", traces::KernelClass::elementwise,
                                                0, exchanged * (1 + plan.exchange_ratio), {interact_bwd})
                                       : interact_bwd;
                exchanged_bwd = collective(exchange, tag + "embedding gradient exchange", backward_kind,
                                           exchanged * plan.exchange_ratio, {ready});
            }
            // Pipelined (semi-synchronous, as TorchRec's TrainPipelineSemiSync): the next step's lookups run here,
            // before this step's sparse update (they read rows one update old), so that their exchange overlaps the
            // rest of this step's backward.
            if (plan.pipeline_lookups && s + 1 < plan.steps) next = look_up(s + 1, {interact_bwd});
            const OpId bottom_bwd =
                kernel(tag + "bottom MLP backward", traces::KernelClass::gemm, 2 * mlp_flops(plan.bottom, local),
                       8 * mlp_params(plan.bottom), {interact_bwd});
            const OpId bottom_grads =
                n > 1 ? collective(dp, tag + "all-reduce bottom MLP grads", CollectiveKind::all_reduce,
                                   4 * mlp_params(plan.bottom), {bottom_bwd})
                      : bottom_bwd;
            // Sparse SGD on the owned rows: read the gradients of the pooled outputs, read and write each touched row.
            const OpId gradients = exchanged_bwd == interact_bwd
                                       ? interact_bwd
                                       : dequantize(tag + "dequantize embedding gradients", exchanged_bwd);
            const OpId update = kernel(tag + "embedding update", traces::KernelClass::embedding, 0,
                                       2 * looked_up * width + pooled_out, {gradients, bottom_bwd});
            step_done = kernel(tag + "dense optimizer", traces::KernelClass::optimizer, 0, 20 * dense_params,
                               {update, top_grads, bottom_grads});
        }
    }
    g.training.model_flops =
        3 * (mlp_flops(plan.bottom, local) + mlp_flops(top, local) + interaction_flops) * n * plan.steps;
    g.training.dtype = plan.dtype;
    return g;
}

std::string dlrm_default_table_rows() { return kaggle_rows; }

}  // namespace clustersim::workloads
