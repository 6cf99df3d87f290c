// Builds the OpGraph of a transformer plan rank by rank (private to workloads/): streams, communicators, the
// pipeline schedule's steps, and each layer's forward and backward kernels and collectives.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/flat_map.h"
#include "traces/op_graph.h"
#include "workloads/transformer/rank_grid.h"
#include "workloads/transformer/transformer_costs.h"
#include "workloads/transformer/transformer_plan.h"

namespace clustersim::workloads {

class TransformerBuilder {
public:
    explicit TransformerBuilder(const TransformerPlan& plan);
    traces::OpGraph build();

private:
    using OpId = traces::OpId;
    struct RankComms {  // communicators of one rank (invalid: a group of one)
        traces::CommId tp, cp, dp, ep, edp, pp_next, pp_prev;
    };
    struct Streams {
        traces::StreamId compute, recv_act, recv_grad, send_act, send_grad, dp, zero, cp_send, cp_recv;
    };
    struct Bucket {  // gradients waiting to be reduced
        double dense_bytes = 0, expert_bytes = 0;
    };

    void choose_simulated();
    void make_communicators();
    void describe_derived();
    traces::CommId add_comm(const std::string& name, const std::vector<std::uint32_t>& members);
    traces::StreamId add_stream(const char* name);
    void build_rank(std::uint32_t rank);
    /// How many consecutive simulated ranks form a tensor-parallel group whose ops are interleaved (1: none).
    [[nodiscard]] std::size_t interleaved_group() const;
    void forward_step(std::uint32_t micro_batch, std::uint32_t chunk);
    void backward_step(std::uint32_t micro_batch, std::uint32_t chunk);
    void forward_layer(std::uint32_t layer, bool recomputing);
    void backward_layer(std::uint32_t layer, bool reduce_gradients);
    void attention_ring(const KernelCost& block, double block_bytes, const char* name);
    /// ZeRO-3: gathers a layer's weights, or with layer UINT32_MAX `table_params` (embedding or output layer).
    void gather_parameters(std::uint32_t layer, double table_params = 0);
    [[nodiscard]] double table_params() const;
    [[nodiscard]] double output_params() const;
    [[nodiscard]] double boundary_bytes() const;
    /// What a message between stages carries: boundary_bytes(), compressed when its direction is.
    [[nodiscard]] double boundary_message(bool backward) const;
    /// With compression, the encode kernel before a boundary send and the decode after its receive.
    void encode_boundary(bool backward, const std::string& tag);
    void decode_boundary(bool backward, const std::string& tag);
    void reduce_bucket();
    /// One bucket's gradients over `comm`: all-reduced, or with dp_compression encoded, exchanged and (later,
    /// emit_decodes) decoded.
    void reduce_gradients(traces::CommId comm, double bytes, const std::string& what);
    /// The compressed buckets' decode kernels, after the backward.
    void emit_decodes();
    void finish_rank();

    /// A kernel's name as a string literal (only literals convert: its address then stands for its text).
    struct Literal {
        template <std::size_t N>
        constexpr Literal(const char (&literal)[N]) : text(literal) {}  // NOLINT(google-explicit-constructor)
        const char* text;
    };
    /// A kernel named `name` ("recompute <name>" when recomputing) of `layer`.
    OpId compute(Literal name, const KernelCost& cost, std::uint32_t layer, bool recomputing = false);
    /// The same with a name built at run time.
    OpId compute_named(std::string_view name, const KernelCost& cost, std::uint32_t layer);
    /// The same with the name's interned id.
    OpId compute_id(std::uint32_t name, const KernelCost& cost);
    /// name_id of a literal, kept by its address in a small direct-mapped table: the plan's kernels and
    /// tensor-parallel calls are named from a few dozen literals, and hashing their text for each of tens of millions
    /// of ops was a fifth of generating them.
    std::uint32_t literal_name_id(Literal name, bool recomputing, std::uint32_t layer);
    /// The interned id of "L<layer> <name>" (of `name` alone with layer UINT32_MAX), kept by (name, layer): a plan
    /// names millions of kernels from a few hundred names, and formatting and hashing each in full was a few
    /// percent of building it.
    std::uint32_t name_id(std::string_view name, std::uint32_t layer);
    OpId collective(traces::StreamId stream, traces::CommId comm, traces::CollectiveKind kind, double bytes,
                    const std::string& name, std::span<const OpId> deps = {});
    /// The same with the name's interned id.
    OpId collective_id(traces::StreamId stream, traces::CommId comm, traces::CollectiveKind kind, double bytes,
                       std::uint32_t name, std::span<const OpId> deps = {});
    OpId p2p(traces::OpKind kind, traces::StreamId stream, traces::CommId comm, std::uint32_t peer, double bytes,
             const std::string& name, std::span<const OpId> deps);
    OpId memory(traces::OpKind kind, traces::MemoryUse use, double bytes, const char* name);
    void tp_collective(traces::CollectiveKind kind, Literal name);
    void ep_all_to_all(double bytes, Literal name);
    [[nodiscard]] std::uint32_t chunk_first_layer(std::uint32_t chunk) const;

    const TransformerPlan& plan_;
    RankGrid grid_;
    std::vector<LayerCosts> costs_;
    traces::OpGraph g_;
    struct NamedLayer {
        std::string name;
        std::uint32_t layer = 0;
        std::uint32_t id = 0;
    };
    std::vector<NamedLayer> named_;                 // name_id's entries
    engine::FlatMap64<std::uint32_t> named_index_;  // hash of (name, layer) -> entry + 1
    struct LiteralName {
        const char* text = nullptr;
        std::uint32_t layer = 0;
        bool recomputing = false;
        std::uint32_t id = 0;
    };
    std::vector<LiteralName> literal_names_ = std::vector<LiteralName>(4096);  // literal_name_id's table
    std::vector<RankComms> comms_;                                             // by rank
    std::vector<std::uint32_t> pp_peer_next_, pp_peer_prev_;                   // by rank
    std::vector<traces::CommId> cp_ring_next_, cp_ring_prev_;
    std::vector<std::uint32_t> cp_next_, cp_prev_;

    std::vector<std::uint32_t> sim_index_;  // by job rank: its index among simulated ranks, or UINT32_MAX
    std::vector<std::uint32_t> simulated_;  // simulated rank -> job rank

    // The rank being built (job rank, and its index among simulated ranks).
    std::uint32_t rank_ = 0, sim_rank_ = 0, stage_ = 0;
    Streams s_;
    OpId last_compute_;
    OpId last_dp_;
    OpId layer_first_;           // the first kernel of the latest layer (ZeRO-3 prefetch starts after it)
    std::vector<OpId> pending_;  // deps of the next compute op
    Bucket bucket_;
    std::vector<double> activation_bytes_;         // by chunk: bytes one micro-batch keeps
    std::vector<DeferredDecode> pending_decodes_;  // compressed buckets exchanged, decoded after the backward
};

}  // namespace clustersim::workloads
