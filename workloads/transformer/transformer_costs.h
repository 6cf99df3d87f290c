// What one rank's kernels of a transformer plan cost, from the shapes alone (FLOPs, bytes moved, GEMM shapes),
// the bytes its collectives move, its memory (weights, gradients, optimizer state, activations as Korthikanti et
// al. 2022 count them), and the model FLOPs of an iteration. Formulas and their sources: docs/models.md
// "Transformer generator".
#pragma once

#include <cstdint>

#include "traces/op_graph.h"
#include "workloads/transformer/transformer_plan.h"

namespace clustersim::workloads {

/// One kernel: a GEMM (shape.m > 0), attention or a memory-bound kernel.
struct KernelCost {
    double flops = 0;
    double bytes = 0;
    traces::GemmShape shape{};
    traces::KernelClass kernel_class = traces::KernelClass::elementwise;
};

/// The forward kernels and messages of one layer for one micro-batch on one rank. Backward costs follow from
/// them (backward_of): GEMMs and attention twice the FLOPs, memory-bound kernels twice the bytes.
struct LayerCosts {
    bool moe = false;
    KernelCost norm, qkv, attention, projection, residual, mlp_in, activation, mlp_out;  // dense path
    KernelCost router, expert_in, expert_activation, expert_out, shared_in, shared_out;  // MoE path
    double tp_bytes = 0;          // all-reduce buffer (or reduce-scatter buffer with SP) of the TP collectives
    double all_to_all_bytes = 0;  // per rank, each of dispatch and combine
    double kv_block_bytes = 0;    // CP: K and V of one sequence chunk, passed around the ring
    double activation_bytes = 0;  // kept from the forward to the backward (recomputation applied)
};

/// Element width of activations and gradients in memory and on the wire (FP8 plans keep them in BF16).
int activation_width(const TransformerPlan& plan);
/// Element width of GEMM inputs (FP8: 1).
int matmul_width(const TransformerPlan& plan);

LayerCosts layer_costs(const TransformerPlan& plan, std::uint32_t layer);
KernelCost backward_of(const KernelCost& forward);
/// The embedding lookup, the logits GEMM and the loss on one rank, per micro-batch.
KernelCost embedding_cost(const TransformerPlan& plan);
KernelCost logits_cost(const TransformerPlan& plan);
KernelCost loss_cost(const TransformerPlan& plan);
/// Bytes of fp32 logits kept on the last stage from a micro-batch's forward to its backward.
double logits_bytes(const TransformerPlan& plan);

/// Weights held by the rank at pipeline stage `stage`, split into dense (data-parallel over cp x dp) and expert
/// (data-parallel over cp x dp / ep) parameters, before ZeRO sharding.
struct StageParams {
    double dense = 0;
    double expert = 0;
    [[nodiscard]] double total() const { return dense + expert; }
};
StageParams stage_params(const TransformerPlan& plan, std::uint32_t stage);
/// Weights of one layer on one rank (for ZeRO-3 gathers and gradient buckets).
StageParams layer_params_on_rank(const TransformerPlan& plan, std::uint32_t layer);

/// Per-rank resident memory at the start of an iteration.
struct StaticMemory {
    double parameters = 0, gradients = 0, optimizer_state = 0, buffers = 0;
};
StaticMemory static_memory(const TransformerPlan& plan, std::uint32_t stage);

/// Model FLOPs of one iteration of the whole job (no recomputation; attention counted without causal masking,
/// as Megatron-LM and PaLM count it).
double model_flops_per_iteration(const TransformerPlan& plan);

}  // namespace clustersim::workloads
