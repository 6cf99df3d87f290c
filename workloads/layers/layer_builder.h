// The layers generator's plan and graph builder (private to workloads/): a layer list trained on data-parallel
// workers, with its ways of keeping the replicas in step: gradient all-reduce in DDP's buckets (optionally
// compressed), local SGD's periodic parameter average, gossip with peers on a graph, or parameter servers.
// The workers' kernels are built in generators/layer_data_parallel.cpp, the exchanges in layers/layer_exchange.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/params.h"
#include "traces/op_graph.h"
#include "traces/pipeline_schedule.h"
#include "workloads/compression.h"
#include "workloads/layers/gossip_graph.h"
#include "workloads/layers/layer_list.h"

namespace clustersim::workloads {

enum class Averaging : std::uint8_t { allreduce, gossip, parameter_server };
enum class PsMode : std::uint8_t { sync, ssp, async };

struct LayerPlan {
    LayerModel model;
    std::uint32_t dp = 1, steps = 1, local_steps = 1;
    std::uint64_t batch = 1;  // per GPU
    traces::DataType dtype = traces::DataType::fp16, grad_dtype = traces::DataType::fp32;
    double bucket_bytes = 0, first_bucket_bytes = 0;
    Compression compression;  // of the gradient buckets or gossip messages
    bool adam = false;
    Averaging averaging = Averaging::allreduce;
    std::vector<GossipGraph> graphs = {GossipGraph::ring};  // round r gossips on graphs[r mod size]
    /// Hierarchical local SGD: averages within groups of this many consecutive ranks (0: all ranks), and over all
    /// ranks every global_every-th averaging round.
    std::uint32_t averaging_group = 0, global_every = 1;
    /// Federated rounds: each round of local_steps steps is run by this many ranks sampled from dp (seeded), which
    /// then average; a rank sampled after sitting out receives the model first (0: every rank, every round).
    std::uint32_t clients_per_round = 0;
    [[nodiscard]] bool sampling() const { return clients_per_round > 0; }
    /// Federated deadline: a client whose round work takes longer is dropped from the round's average (its update
    /// discarded); `dropped` lists them per round (sorted), as the scenario's probe run found or the plan gave.
    double round_deadline_s = -1;
    bool drops_given = false;
    std::vector<std::vector<std::uint32_t>> dropped;  // by round
    std::uint64_t seed = 1;
    // Parameter servers: ranks dp .. dp + servers - 1, each holding 1/servers of the parameters.
    std::uint32_t servers = 1;
    PsMode ps_mode = PsMode::sync;
    std::uint32_t staleness = 0;  // ssp: a worker's step t waits for its pull of step t - 1 - staleness
    double sparse_fraction = 1;   // share of the parameters a step's gradients touch (GLM-style sparse models)
    // ZeRO-Offload-like: optimizer state and step on the host CPU, gradients down and parameters up over PCIe.
    bool offload = false;
    double host_bandwidth = 0;  // bytes/s of host memory one rank's optimizer step streams
    // Pipeline parallelism: each replica's layers split over pp consecutive ranks (rank = replica x pp + stage),
    // each step's batch in `microbatches` run by `schedule`; stage_first[s] is stage s's first layer.
    std::uint32_t pp = 1, microbatches = 1;
    traces::PipelineSchedule schedule = traces::PipelineSchedule::one_f_one_b;
    std::vector<std::uint32_t> stage_first = {0};
    [[nodiscard]] bool pipelined() const { return pp > 1 || microbatches > 1; }
    // Model parallelism of the last layers ("one weird trick", Krizhevsky 2014): from layer mp_first on, each layer's
    // output neurons are split over groups of mp consecutive ranks, which process their samples together; the layers
    // before stay data parallel over every rank.
    std::uint32_t mp = 1, mp_first = 0;
    [[nodiscard]] bool model_parallel(std::size_t layer) const { return mp > 1 && layer >= mp_first; }
    [[nodiscard]] bool gossip() const { return averaging == Averaging::gossip; }
    [[nodiscard]] bool parameter_server() const { return averaging == Averaging::parameter_server; }
    [[nodiscard]] std::uint32_t ranks() const { return dp * pp + (parameter_server() ? servers : 0); }
};

/// Stage boundaries of `pp` contiguous stages balancing the layers' forward FLOPs (the least maximum stage): each
/// stage's first layer, then the layer count (layers/layer_stages.cpp).
std::vector<std::uint32_t> balanced_stages(const LayerModel& model, std::uint32_t pp);
/// Reads round_deadline and dropped_clients into `plan` (federated rounds; layers/federated_rounds.cpp).
void read_deadline(const engine::Params& params, LayerPlan& plan);
/// Reads pp, microbatches, schedule and stage_layers into `plan` (its model, batch and averaging read before),
/// with located errors for impossible pipelines.
void read_pipeline(const engine::Params& params, LayerPlan& plan);
/// Reads mp and mp_from into `plan` (layers/layer_model_parallel.cpp).
void read_model_parallel(const engine::Params& params, LayerPlan& plan);

/// The bytes a compressed message of `bytes` (in the gradient datatype) sends (Compression::sent_bytes).
double compressed_bytes(const LayerPlan& plan, double bytes);

class LayerBuilder {
public:
    explicit LayerBuilder(const LayerPlan& plan) : plan_(plan) {}
    traces::OpGraph build();

private:
    using OpId = traces::OpId;
    OpId compute(const std::string& name, traces::KernelClass cls, double flops, double bytes, std::uint32_t shape,
                 std::vector<OpId> deps);
    OpId collective(traces::CollectiveKind kind, double bytes, const std::string& name, std::vector<OpId> deps,
                    traces::CommId comm = {});
    OpId p2p(traces::OpKind kind, const std::string& stream, std::uint32_t peer, double bytes, const std::string& name,
             std::vector<OpId> deps);
    void memory(traces::OpKind kind, traces::MemoryUse use, double bytes, const std::string& name);
    void build_rank();
    /// Layer l's forward on `samples` samples, named "TAG forward NAME": its activations allocated, the GEMM kernel
    /// (a model-parallel layer's share of the parameters) and the batch norm after it; returns the last kernel and,
    /// in `gemm`, the GEMM's.
    OpId layer_forward(const std::string& tag, std::size_t l, double samples, std::vector<OpId> deps,
                       OpId* gemm = nullptr);
    /// Layer l's backward: the batch norm's backward, the GEMM's (returned), the activations freed.
    OpId layer_backward(const std::string& tag, std::size_t l, double samples, std::vector<OpId> deps);
    traces::OpGraph build_pipeline();
    traces::OpGraph finish();
    /// A rank of a pipeline (or of data parallelism with micro-batches): its stage's layers, micro-batch by
    /// micro-batch in schedule order (layers/layer_pipeline.cpp).
    void build_pipeline_rank();
    /// Adds `grad_bytes` of a layer's gradients to the open DDP bucket, reducing it (or offloading it) once full or
    /// at the first layer.
    void add_to_bucket(std::uint32_t step, double grad_bytes, OpId after, bool first_layer, traces::CommId comm = {});
    // Exchanges (layer_exchange.cpp).
    void reduce_bucket(std::uint32_t step, double bytes, OpId after, traces::CommId comm = {});
    /// The compressed buckets' decode kernels, after the backward's (before the optimizer waits for them).
    void emit_decodes();
    // Model parallelism of the last layers (layers/layer_model_parallel.cpp).
    void make_model_parallel_groups();
    /// Before layer l's forward: the group's samples gathered into the first model-parallel layer, or the previous
    /// model-parallel layer's output neurons gathered; returns what the layer waits for.
    std::vector<OpId> gather_into(std::uint32_t step, std::size_t layer, std::vector<OpId> deps);
    /// After layer l's backward: its input gradients summed over the group (and, into the data-parallel layers,
    /// scattered back to each rank's samples); returns what the next backward waits for.
    std::vector<OpId> exchange_input_gradients(std::uint32_t step, std::size_t layer, OpId after);
    OpId mp_collective(traces::CollectiveKind kind, double bytes, const std::string& name, OpId after);
    OpId gossip_round(std::uint32_t step, std::uint32_t round, OpId after);
    /// A worker's push of its gradients to every server and its pulls of the parameters back; returns what its
    /// next step waits for (the pulls, or in ssp those of `staleness` steps before, or nothing when async).
    std::vector<OpId> push_and_pull(std::uint32_t step, OpId after);
    void build_server();
    /// Offload (instead of reduce_bucket): a bucket's gradients reduce-scattered, each rank's part to the host, the
    /// host's optimizer step, the part back and all-gathered (the last op appended to uploads_).
    void offload_bucket(std::uint32_t step, double bytes, OpId after);

    const LayerPlan& plan_;
    traces::OpGraph g_;
    traces::RankId rank_;
    traces::StreamId compute_, dp_;
    traces::CommId world_, p2p_comm_;
    std::vector<traces::CommId> groups_;               // hierarchical averaging: by group
    std::vector<std::vector<std::uint32_t>> clients_;  // federated: each round's ranks
    std::vector<traces::CommId> round_comms_;          // federated: each round's clients
    /// Federated: round q's newcomers (clients of q, not of q - 1), each receiving the model from q - 1's clients in
    /// turn; by receiver and by sender (then receiver), so that each rank finds its own in a binary search.
    struct ModelMove {
        std::uint32_t to, from;
    };
    std::vector<std::vector<ModelMove>> moves_by_receiver_, moves_by_sender_;  // by round
    void plan_model_moves();
    [[nodiscard]] bool is_client(std::uint32_t round, std::uint32_t rank) const;
    /// A client of `round` that made the deadline (or every client, without one).
    [[nodiscard]] bool on_time(std::uint32_t round, std::uint32_t rank) const;
    std::vector<std::vector<std::vector<std::uint32_t>>> sends_, sources_;  // gossip: round -> rank -> peers
    std::vector<std::uint32_t> shapes_;            // by layer: GEMM shape index of the batch, or no_shape
    std::vector<OpId> reductions_;                 // this step's bucket reductions (the optimizer waits for them)
    std::vector<DeferredDecode> pending_decodes_;  // compressed buckets sent this step, decoded after the backward
    std::vector<std::vector<OpId>> pulls_;         // parameter server: a worker's pulls, by step
    std::vector<OpId> uploads_;                    // offload: this step's parameter copies back to the GPU
    std::uint32_t bucket_index_ = 0;
    std::uint32_t round_first_op_ = UINT32_MAX;
    OpId last_compute_;  // the rank's latest kernel (compute)                   // federated: the op that starts this
                         // client's round
    double bucket_ = 0;  // gradient bytes in the open bucket
    traces::CommId bucket_comm_;                         // the group the open bucket is reduced over (invalid: world_)
    OpId bucket_after_;                                  // the backward that last added to the open bucket
    traces::StreamId mp_;                                // model parallelism: the activations' exchanges
    std::vector<traces::CommId> mp_groups_, mp_shards_;  // by group; by position in a group
    std::vector<traces::CommId> stage_dp_;               // pipeline: each stage's data-parallel group
};

}  // namespace clustersim::workloads
