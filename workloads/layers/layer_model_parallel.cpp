// The layers generator's model-parallel last layers (see layer_builder.h), as Krizhevsky's "one weird trick"
// (arXiv:1404.5997) trains the fully connected layers of a CNN: the convolutions data parallel over every rank,
// the layers from `mp_from` on split by output neuron over groups of `mp` consecutive ranks.
//
// Forward: into the first model-parallel layer the group all-gathers its ranks' inputs (each rank's batch of the
// previous layer's outputs), so each rank computes its share of the neurons for the group's mp x batch samples; a
// later model-parallel layer first all-gathers the previous one's neuron shares. Backward: a model-parallel
// layer's input gradients are partial sums over the group's shares: all-reduced before the previous
// model-parallel layer, reduce-scattered (each rank getting its own samples') before the first data-parallel one.
// The model-parallel layers' gradients are reduced over the ranks holding the same share (one per group); the
// others' over all ranks.
#include <fmt/format.h>

#include "engine/units.h"
#include "workloads/layers/layer_builder.h"

namespace clustersim::workloads {

using traces::CollectiveKind;
using traces::OpId;
using traces::OpKind;
using traces::RankId;

void read_model_parallel(const engine::Params& p, LayerPlan& plan) {
    plan.mp = static_cast<std::uint32_t>(p.integer_in("mp", 1, 1 << 12));
    const std::string& from = p.string("mp_from");
    if (plan.mp == 1) {
        if (!from.empty()) p.fail("mp_from", "names the first model-parallel layer: it needs mp above 1");
        return;
    }
    if (from.empty()) p.fail("mp", "model parallelism splits the layers from mp_from on: name that layer");
    const auto& layers = plan.model.layers;
    std::size_t first = layers.size();
    for (std::size_t l = 0; l < layers.size() && first == layers.size(); ++l)
        if (layers[l].name == from) first = l;
    if (first == layers.size()) p.fail("mp_from", fmt::format("no layer named '{}' in {}", from, plan.model.name));
    if (first == 0)
        p.fail("mp_from",
               "the first model-parallel layer needs data-parallel layers before it (whose outputs it "
               "gathers): name a later layer");
    plan.mp_first = static_cast<std::uint32_t>(first);
    if (plan.dp % plan.mp != 0) p.fail("mp", fmt::format("groups of {} do not split dp = {} ranks", plan.mp, plan.dp));
    if (plan.pipelined() || plan.averaging != Averaging::allreduce || plan.local_steps > 1 || plan.offload ||
        plan.sampling() || plan.compression.on())
        p.fail("mp",
               "model-parallel layers train with DDP's all-reduce every step: averaging: allreduce, local_steps 1, "
               "without pp, microbatches, offload, clients_per_round or compression");
}

void LayerBuilder::make_model_parallel_groups() {
    if (plan_.mp < 2) return;
    for (std::uint32_t k = 0; k < plan_.dp / plan_.mp; ++k) {
        std::vector<RankId> members;
        for (std::uint32_t i = 0; i < plan_.mp; ++i) members.push_back(RankId{k * plan_.mp + i});
        mp_groups_.push_back(g_.communicator(fmt::format("mp group {}", k), members));
    }
    for (std::uint32_t i = 0; i < plan_.mp; ++i) {
        std::vector<RankId> members;
        for (std::uint32_t k = 0; k < plan_.dp / plan_.mp; ++k) members.push_back(RankId{k * plan_.mp + i});
        mp_shards_.push_back(plan_.dp > plan_.mp ? g_.communicator(fmt::format("mp shard {}", i), members)
                                                 : traces::CommId{});
    }
}

OpId LayerBuilder::mp_collective(CollectiveKind kind, double bytes, const std::string& name, OpId after) {
    traces::Op op{mp_, g_.intern(name), OpKind::collective, traces::KernelClass::communication, plan_.dtype};
    op.collective = kind;
    op.set_bytes(engine::saturated_bytes(bytes));
    op.set_comm(mp_groups_[rank_.value / plan_.mp]);
    return g_.add(op, std::vector<OpId>{after});
}

std::vector<OpId> LayerBuilder::gather_into(std::uint32_t step, std::size_t l, std::vector<OpId> deps) {
    // All-gather ops carry each rank's contribution: its batch of the previous layer's outputs (or of their
    // neuron share, mp x batch samples x 1/mp of them: the same size).
    const auto& layers = plan_.model.layers;
    const double width = traces::data_type_size(plan_.dtype), batch = static_cast<double>(plan_.batch);
    const double bytes = width * batch * static_cast<double>(layers[l - 1].activations);
    const std::string what = l == plan_.mp_first ? "inputs" : "neurons";
    return {mp_collective(CollectiveKind::all_gather, bytes,
                          fmt::format("step{} all-gather {} of {}", step, what, layers[l].name), deps.front())};
}

std::vector<OpId> LayerBuilder::exchange_input_gradients(std::uint32_t step, std::size_t l, OpId after) {
    // The group's mp x batch samples' gradients of the layer's inputs, summed over the neuron shares.
    const auto& layers = plan_.model.layers;
    const double width = traces::data_type_size(plan_.dtype), batch = static_cast<double>(plan_.batch);
    const double bytes = width * plan_.mp * batch * static_cast<double>(layers[l - 1].activations);
    const bool last = l == plan_.mp_first;  // into the data-parallel layers: each rank keeps its own samples'
    return {mp_collective(
        last ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, bytes,
        fmt::format("step{} {} input gradients of {}", step, last ? "reduce-scatter" : "all-reduce", layers[l].name),
        after)};
}

}  // namespace clustersim::workloads
