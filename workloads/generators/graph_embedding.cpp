// The graph_embedding generator: knowledge-graph embedding training (PyTorch-BigGraph-like) of a graph too large for
// the GPU, its nodes split into `partitions` partitions held in host memory, `buffer` of them at a time on the GPU
// (partition swapping). Edges fall into partitions x partitions buckets by their two ends' partitions; each bucket
// trains when both its partitions are buffered (workloads/embeddings/partition_order.h gives the order and the
// swaps).
//
// One GPU (rank 0). Per bucket, stream "compute": a GEMM kernel scoring each edge against `negatives` sampled
// nodes, forward and backward (2 x 3 x edges x negatives x dim FLOPs), and an embedding kernel reading the edges'
// embeddings and writing their gradients and Adagrad updates (14 x edges x dim values: 3 read, 3 gradients written,
// 2 rows read and written with their optimizer state). Swaps, streams "to host" and "to device" (PCIe is full
// duplex): an evicted partition (its embeddings and Adagrad state, 2 x nodes / partitions x dim values) is copied to
// the host after the last bucket that used it, and the incoming one is copied to the GPU after that; the buckets
// needing it wait for its copy, while the others train meanwhile (copies overlap compute, as Marius's pipeline
// does). Memory: the buffer's partitions.
#include <cmath>

#include <fmt/format.h>

#include "engine/memory_budget.h"
#include "engine/units.h"
#include "workloads/embeddings/partition_order.h"
#include "workloads/workload_registry.h"

namespace clustersim::workloads {

using traces::OpGraph;
using traces::OpId;
using traces::OpKind;
using traces::RankId;

namespace {

constexpr engine::NameTable<PartitionOrdering, 2> ordering_names{
    {{PartitionOrdering::sequential, "sequential"}, {PartitionOrdering::buffer_aware, "buffer_aware"}}};

struct EmbeddingPlan {
    double nodes = 0, edges = 0;
    std::uint32_t dim = 100, partitions = 16, buffer = 8, negatives = 1000, epochs = 1;
    PartitionOrdering ordering = PartitionOrdering::buffer_aware;
    traces::DataType dtype = traces::DataType::fp32;
};

EmbeddingPlan read_plan(const engine::Params& p) {
    EmbeddingPlan plan;
    plan.nodes = static_cast<double>(p.integer_in("nodes", 1, std::int64_t{1} << 40));
    plan.edges = static_cast<double>(p.integer_in("edges", 1, std::int64_t{1} << 44));
    plan.dim = static_cast<std::uint32_t>(p.integer_in("dim", 1, 1 << 16));
    plan.partitions = static_cast<std::uint32_t>(p.integer_in("partitions", 1, 256));
    plan.buffer = static_cast<std::uint32_t>(p.integer_in("buffer", 1, 256));
    plan.negatives = static_cast<std::uint32_t>(p.integer_in("negatives", 0, 1 << 20));
    plan.epochs = static_cast<std::uint32_t>(p.integer_in("epochs", 1, 1000));
    plan.ordering = engine::choose(p, "ordering", ordering_names, "ordering");
    // Planning the order weighs each swap against the partitions (buffer-aware) or the buffer (sequential's
    // eviction): up to about P^3 steps per epoch.
    const double planning = std::pow(double(plan.partitions), 3) * plan.epochs;
    if (planning > 2e7)
        p.fail("epochs", fmt::format("planning the bucket order of {} partitions over {} epochs takes about {:.3g} "
                                     "steps (at most 2e7): fewer epochs (each epoch trains the same buckets: "
                                     "simulate one and scale) or partitions",
                                     plan.partitions, plan.epochs, planning));
    if (plan.buffer < 2 && plan.partitions > 1)
        p.fail("buffer", "a bucket needs the partitions of both its ends: a buffer of at least 2 partitions");
    if (plan.buffer > plan.partitions)
        p.fail("buffer",
               fmt::format("{} partitions in the buffer, but the graph has {}", plan.buffer, plan.partitions));
    if (plan.nodes < plan.partitions)
        p.fail("partitions", fmt::format("{} partitions of {} nodes", plan.partitions, plan.nodes));
    const auto dtype = traces::parse_data_type(p.string("dtype"));
    if (!dtype) p.fail("dtype", fmt::format("unknown datatype '{}'", p.string("dtype")));
    plan.dtype = *dtype;
    return plan;
}

}  // namespace

std::vector<engine::ParamSpec> graph_embedding_params() {
    using engine::ParamType;
    return {
        {"generator", ParamType::string, "graph_embedding", "this generator's name"},
        {"nodes", ParamType::integer, "100000000", "nodes of the graph (each an embedding of dim values)"},
        {"edges", ParamType::integer, "1000000000", "edges trained per epoch"},
        {"dim", ParamType::integer, "100", "embedding dimension"},
        {"partitions", ParamType::integer, "16", "node partitions P: the edges fall into P x P buckets"},
        {"buffer", ParamType::integer, "8", "partitions held on the GPU at a time (at least 2, at most partitions)"},
        {"ordering", ParamType::string, "buffer_aware",
         "bucket order: sequential (row by row, LRU eviction) or buffer_aware (every buffered bucket before a swap, "
         "each swap the one that makes the most buckets trainable)"},
        {"negatives", ParamType::integer, "1000", "negative samples each edge is scored against"},
        {"epochs", ParamType::integer, "1", "passes over the edges"},
        {"dtype", ParamType::string, "fp32", "datatype of embeddings and their optimizer state"},
    };
}

std::uint64_t graph_embedding_ranks(const engine::Params&) { return 1; }

OpGraph build_graph_embedding(const engine::Params& params) {
    const EmbeddingPlan plan = read_plan(params);
    const double p = plan.partitions;
    // Two kernels per bucket and at most two copies per swap, about 200 bytes each, plus the schedule.
    const double ops = p * p * plan.epochs * 6.0;
    engine::require_memory(ops * 200.0, fmt::format("the graph embedding plan ({:.3g} ops)", ops),
                           "fewer partitions or epochs", params.location("partitions").file);
    const std::vector<BucketStep> order = order_buckets(plan.partitions, plan.buffer, plan.ordering, plan.epochs);
    const double width = traces::data_type_size(plan.dtype), dim = plan.dim;
    const double partition_bytes = 2 * plan.nodes / p * dim * width;  // embeddings and Adagrad state
    const double bucket_edges = plan.edges / (p * p);

    OpGraph g;
    g.rank_count = 1;
    g.source = fmt::format("graph_embedding generator ({} partitions, buffer {}, {} ordering)", plan.partitions,
                           plan.buffer, engine::enum_name(ordering_names, plan.ordering));
    const RankId rank{0};
    const auto compute = g.stream(rank, "compute"), to_host = g.stream(rank, "to host"),
               to_device = g.stream(rank, "to device");
    auto op_of = [&](traces::StreamId stream, const std::string& name, OpKind kind, traces::KernelClass cls) {
        return traces::Op{stream, g.intern(name), kind, cls, plan.dtype};
    };
    traces::Op buffer = op_of(compute, "alloc partition buffer", OpKind::alloc, traces::KernelClass::other);
    buffer.set_bytes(engine::saturated_bytes(plan.buffer * partition_bytes));
    buffer.set_memory(traces::MemoryUse::parameters);
    g.add(buffer);
    std::vector<OpId> loaded(plan.partitions), last_use(plan.partitions);  // by partition
    std::uint64_t loads = 0, evictions = 0;
    for (std::size_t k = 0; k < order.size(); ++k) {
        const BucketStep& step = order[k];
        for (const PartitionSwap& s : step.swaps) {
            std::vector<OpId> slot;  // the load waits for its slot to be written back
            if (s.out != UINT32_MAX) {
                traces::Op out = op_of(to_host, fmt::format("evict partition {}", s.out), OpKind::memcpy_d2h,
                                       traces::KernelClass::communication);
                out.set_bytes(engine::saturated_bytes(partition_bytes));
                std::vector<OpId> deps;
                if (last_use[s.out].valid()) deps.push_back(last_use[s.out]);
                slot.push_back(g.add(out, deps));
                ++evictions;
            }
            traces::Op in = op_of(to_device, fmt::format("load partition {}", s.in), OpKind::memcpy_h2d,
                                  traces::KernelClass::communication);
            in.set_bytes(engine::saturated_bytes(partition_bytes));
            loaded[s.in] = g.add(in, slot);
            last_use[s.in] = OpId::invalid();
            ++loads;
        }
        const std::string tag = fmt::format("bucket {}-{}", step.lhs, step.rhs);
        std::vector<OpId> deps;
        for (const std::uint32_t part : {step.lhs, step.rhs})
            if (loaded[part].valid()) deps.push_back(loaded[part]);
        traces::Op score = op_of(compute, tag + " scores", OpKind::compute, traces::KernelClass::gemm);
        score.set_flops(6 * bucket_edges * plan.negatives * dim);
        score.set_bytes(engine::saturated_bytes(width * bucket_edges * 3 * dim));
        const OpId scored = g.add(score, deps);
        traces::Op update = op_of(compute, tag + " update", OpKind::compute, traces::KernelClass::embedding);
        update.set_bytes(engine::saturated_bytes(width * bucket_edges * 14 * dim));
        last_use[step.lhs] = last_use[step.rhs] = g.add(update, std::vector<OpId>{scored});
    }
    g.derived.push_back(fmt::format("partition loads: {}", loads));
    g.derived.push_back(fmt::format("partition evictions: {}", evictions));
    g.derived.push_back(fmt::format("partition bytes: {:.0f}", partition_bytes));
    g.training.model_flops = 6 * plan.edges * plan.negatives * dim * plan.epochs;
    g.training.dtype = plan.dtype;
    return g;
}

}  // namespace clustersim::workloads
