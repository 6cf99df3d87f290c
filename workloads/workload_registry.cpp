// The generator table, kept in alphabetical order.
#include "workloads/workload_registry.h"

#include <algorithm>

#include <fmt/format.h>

#include "workloads/compression.h"
#include "workloads/transformer/transformer_plan.h"

namespace clustersim::workloads {

namespace {
using engine::ParamType;
std::vector<engine::ParamSpec> dlrm_params() {
    // Defaults: facebookresearch/dlrm's Criteo Kaggle configuration.
    return {
        {"generator", ParamType::string, "dlrm", "this generator's name"},
        {"model", ParamType::string, "kaggle",
         "kaggle (Criteo Kaggle: 26 tables up to 10.1 M rows, dim 16) or terabyte (Criteo Terabyte hashed to 40 M "
         "rows, dim 128, MLPs 13-512-256-128 and 1024-1024-512-256-1): facebookresearch/dlrm's configurations; "
         "table_rows, dim, bottom_mlp and top_mlp given override them"},
        {"table_rows", ParamType::string, dlrm_default_table_rows(),
         "rows of each embedding table, joined by '-' (default: the model's; kaggle: the 26 Criteo Kaggle tables)"},
        {"dim", ParamType::integer, "16", "embedding dimension (the bottom MLP's output; default: the model's)"},
        {"pooling", ParamType::number, "1", "lookups per table and sample (1: one-hot features)"},
        {"bottom_mlp", ParamType::string, "13-512-256-64-16", "dense features, then the bottom MLP's layer sizes"},
        {"top_mlp", ParamType::string, "512-256-1",
         "the top MLP's layer sizes (its input, the interaction's output, follows from the tables and dim)"},
        {"ranks", ParamType::integer, "8", "GPUs: the MLPs data parallel, the tables sharded over them"},
        {"batch_per_gpu", ParamType::integer, "2048", "samples per GPU and step"},
        {"sharding", ParamType::string, "table",
         "embedding sharding: table (whole tables, largest onto the least loaded rank), row, or column"},
        {"steps", ParamType::integer, "1", "training steps in the run"},
        {"exchange_compression", ParamType::string, "none",
         "quantized exchange of the pooled embeddings and their gradients (TorchRec's quantized communication): "
         "none or quantize, with a cast kernel before and after each exchange"},
        {"exchange_compression_ratio", ParamType::number, "0.5",
         "bytes sent over the uncompressed (0.5: fp32 to fp16 or bf16; 0.25: to 8 bits)"},
        {"pipeline_lookups", ParamType::boolean, "false",
         "issue the next step's embedding lookups and their exchange before this step's sparse update "
         "(semi-synchronous, as TorchRec's TrainPipelineSemiSync: they read rows one update old), so that the exchange "
         "overlaps the rest of the backward; needs steps >= 2"},
        {"dtype", ParamType::string, "fp32", "datatype of embeddings, activations and kernels"},
    };
}

std::vector<engine::ParamSpec> layers_params() {
    return {
        {"generator", ParamType::string, "layers", "this generator's name"},
        {"model", ParamType::string, "resnet50",
         "resnet50, vgg16, or a YAML layer list (name, flops, params, activations, gemm, repeat per layer; a path "
         "relative to the scenario)"},
        {"dp", ParamType::integer, "8", "data-parallel ranks"},
        {"batch_per_gpu", ParamType::integer, "32", "samples per GPU and step"},
        {"global_batch", ParamType::integer, "0", "samples per step over all ranks (0: batch_per_gpu x dp)"},
        {"steps", ParamType::integer, "1", "training steps in the run"},
        {"mp", ParamType::integer, "1",
         "model parallelism of the last layers (Krizhevsky's one weird trick): from mp_from on, each layer's output "
         "neurons split over groups of mp consecutive ranks that process their samples together; the layers "
         "before stay data parallel"},
        {"mp_from", ParamType::string, "", "the first model-parallel layer (with mp > 1), e.g. fc6"},
        {"pp", ParamType::integer, "1",
         "pipeline stages: each data-parallel replica's layers split over pp consecutive ranks (rank = replica x pp + "
         "stage), activations and their gradients sent between stages"},
        {"microbatches", ParamType::integer, "1",
         "micro-batches per step (divides batch_per_gpu): the pipeline's schedule runs them; with pp 1, gradient "
         "accumulation"},
        {"schedule", ParamType::string, "1f1b", "pipeline schedule: gpipe or 1f1b"},
        {"stage_layers", ParamType::string, "",
         "layers of each stage, e.g. \"20,34\"; default: contiguous stages balancing the forward FLOPs"},
        {"dtype", ParamType::string, "fp16", "datatype of the kernels and activations (mixed precision)"},
        {"grad_dtype", ParamType::string, "fp32", "datatype of the gradients reduced (DDP reduces in the parameters')"},
        {"bucket_mb", ParamType::number, "25", "DDP gradient bucket size in MiB (PyTorch's bucket_cap_mb)"},
        {"first_bucket_mb", ParamType::number, "1", "size of the first (last layers') bucket in MiB (PyTorch's)"},
        {"local_steps", ParamType::integer, "1",
         "local SGD: average the parameters every H steps instead of reducing gradients every step (1: DDP)"},
        {"round_deadline", ParamType::string, "",
         "federated rounds: a client whose round (model download and local steps) takes longer is dropped from the "
         "round's average, its update discarded; the scenario finds them by a probe run of the plan"},
        {"dropped_clients", ParamType::string, "",
         "the clients to drop, ROUND:RANK pairs separated by commas (as the probe found them: resolved.yaml); given, "
         "no probe runs"},
        {"compression", ParamType::string, "none",
         "gradient compression of each bucket: none, topk (all-gather of values and 4-byte indices), quantize "
         "(all-gather), lowrank (all-reduce of the factors, PowerSGD-like)"},
        {"compression_ratio", ParamType::number, "0.01",
         "fraction of a bucket's elements (topk) or bytes (quantize, lowrank) that is sent"},
        {"error_feedback", ParamType::boolean, "true", "keep each gradient's compression residual (memory and reads)"},
        {"optimizer", ParamType::string, "sgd", "sgd (with momentum) or adam: the optimizer step's memory traffic"},
        {"averaging", ParamType::string, "allreduce",
         "allreduce (DDP, or local SGD's periodic average) or gossip (each rank exchanges parameters with its "
         "peers on gossip_graph every local_steps steps)"},
        {"gossip_graph", ParamType::string, "ring",
         "ring, torus, exponential (i +- 2^k), one_peer_exponential (one 2^k hop per round), random_matching; or a "
         "time-varying schedule of them separated by commas, round r on the (r mod count)-th "
         "(\"ring,random_matching\")"},
        {"averaging_group", ParamType::integer, "0",
         "hierarchical local SGD: average within groups of this many consecutive ranks (e.g. a node's 8), over all "
         "ranks every global_every-th round (0: always over all)"},
        {"global_every", ParamType::integer, "1", "hierarchical local SGD: every this many averaging rounds is global"},
        {"clients_per_round", ParamType::integer, "0",
         "federated rounds: each round (local_steps steps) is run by this many ranks sampled from dp (seeded by "
         "seed), which then average their parameters; a rank sampled after sitting out first receives the model "
         "from one of the last round's clients (0: every rank, every round)"},
        {"seed", ParamType::integer, "1", "seed of the random matchings and of the federated rounds' clients"},
        {"servers", ParamType::integer, "1",
         "parameter servers (averaging: parameter_server): ranks dp .. dp + servers - 1, each 1/servers of the model"},
        {"ps_mode", ParamType::string, "sync",
         "sync (each step's pushes summed, then one update), ssp (bounded staleness), async (each push applied alone)"},
        {"staleness", ParamType::integer, "0", "ssp: a worker's step may use parameters this many steps old"},
        {"sparse_fraction", ParamType::number, "1",
         "share of the parameters a step's gradients touch, pushed and pulled (1: dense; GLM-style sparse models)"},
        {"offload", ParamType::string, "none",
         "optimizer: ZeRO-Offload-like, each bucket reduce-scattered, each rank's part copied to the host, the "
         "optimizer step run there, the part copied back and all-gathered before the next step"},
        {"host_bandwidth", ParamType::rate, "51.2 GB/s",
         "host memory bandwidth each rank's optimizer step streams (default: a DGX-A100's two sockets of 8 "
         "DDR4-3200 channels, 409.6 GB/s, shared by its 8 GPUs)"},
    };
}

std::vector<engine::ParamSpec> pipeline_params() {
    std::vector<engine::ParamSpec> specs = {
        {"generator", ParamType::string, "pipeline", "this generator's name"},
        {"pp", ParamType::integer, "4", "pipeline stages"},
        {"dp", ParamType::integer, "1", "data-parallel replicas of the pipeline"},
        {"microbatches", ParamType::integer, "8", "micro-batches per iteration"},
        {"schedule", ParamType::string, "1f1b", "pipeline schedule: gpipe or 1f1b"},
        {"virtual_stages", ParamType::integer, "1",
         "model chunks per stage (Megatron's interleaved schedule; divides layers_per_stage, and pp divides "
         "microbatches)"},
        {"layers_per_stage", ParamType::integer, "4", "transformer layers on each stage"},
        {"hidden", ParamType::integer, "4096", "hidden size h"},
        {"seq_len", ParamType::integer, "2048", "sequence length s"},
        {"micro_batch_size", ParamType::integer, "1", "sequences per micro-batch b"},
        {"dtype", ParamType::string, "bf16", "datatype of weights, activations and gradients"},
        {"forward_time", ParamType::string, "",
         "fixed time of one micro-batch's forward on a stage (default: from FLOPs)"},
        {"backward_time", ParamType::string, "",
         "fixed time of one micro-batch's backward on a stage (default: 2x forward FLOPs)"},
        {"optimizer", ParamType::boolean, "true", "end with an optimizer step after the gradient all-reduce"},
    };
    add_stage_compression_params(specs);
    return specs;
}
}  // namespace

const std::vector<GeneratorEntry>& workload_generators() {
    static const std::vector<GeneratorEntry> entries = {
        {"dlrm",
         "a deep learning recommendation model: bottom and top MLPs data parallel, embedding tables sharded "
         "table-, row- or column-wise with an exchange of pooled embeddings forward and of their gradients backward",
         dlrm_params(), &build_dlrm, &dlrm_ranks},
        {"graph_embedding",
         "knowledge-graph embedding training of a graph larger than the GPU: node partitions swapped between host "
         "and GPU memory over PCIe as the edge buckets need them (sequential or buffer-aware order), copies "
         "overlapping the buckets' kernels",
         graph_embedding_params(), &build_graph_embedding, &graph_embedding_ranks},
        {"inference",
         "a transformer (dense or MoE) serving a batch of requests with TP, PP and EP: the prefill of every "
         "prompt, then one decode step per output token reading the weights and the KV cache; time to first token "
         "and per token",
         inference_params(), &build_inference, &inference_ranks},
        {"layers",
         "a model as a list of layers (ResNet-50, VGG-16 or a YAML file) trained data parallel as PyTorch DDP does: "
         "gradient buckets all-reduced in reverse layer order during the backward; local SGD and gradient "
         "compression as options",
         layers_params(), &build_layer_data_parallel, &layer_data_parallel_ranks},
        {"pipeline",
         "transformer layers split over pp pipeline stages (GPipe, 1F1B or interleaved 1F1B), replicated dp times "
         "with a per-layer "
         "gradient all-reduce overlapping the last backward",
         pipeline_params(), &build_pipeline_data_parallel, &pipeline_data_parallel_ranks},
        {"transformer",
         "a decoder-only transformer (dense or MoE) with Megatron-style TP/SP, PP (GPipe, 1F1B, interleaved), CP, "
         "DP with ZeRO 0-3 and EP; kernels from the model's shapes, memory as allocations",
         transformer_params(), &build_transformer},
    };
    return entries;
}

const GeneratorEntry& find_workload_generator(std::string_view name, const engine::SourceLocation& where) {
    const auto& all = workload_generators();
    const auto it = std::find_if(all.begin(), all.end(), [&](const GeneratorEntry& e) { return e.name == name; });
    if (it != all.end()) return *it;
    std::string known;
    for (const auto& e : all) known += (known.empty() ? "" : ", ") + e.name;
    throw engine::InputError(where, fmt::format("unknown workload generator '{}' (known: {})", name, known));
}

}  // namespace clustersim::workloads
