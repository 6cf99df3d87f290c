// The OpGraph: what every rank of a distributed training job executes. Ops live in flat arrays with integer ids;
// each op runs on one stream of one rank; ops on a stream run in order; `deps` add edges between ops of a rank.
// Collectives match across ranks by communicator and issue order; send/recv by (src, dst, communicator, order).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/ids.h"
#include "engine/time.h"
#include "traces/op_deps.h"

namespace clustersim::traces {

struct OpTag {};
using OpId = engine::StrongId<OpTag>;
struct RankTag {};
using RankId = engine::StrongId<RankTag>;
struct StreamTag {};
using StreamId = engine::StrongId<StreamTag>;  // global: streams of all ranks in one array
struct CommTag {};
using CommId = engine::StrongId<CommTag>;

/// `delay` is time the host kept a stream idle (launch gaps kept from a profile); it occupies the stream
/// without using the GPU.
enum class OpKind : std::uint8_t { compute, collective, send, recv, memcpy_h2d, memcpy_d2h, alloc, free, delay };
enum class CollectiveKind : std::uint8_t {
    all_reduce,
    reduce_scatter,
    all_gather,
    broadcast,
    reduce,
    all_to_all,
    barrier
};
enum class KernelClass : std::uint8_t { gemm, attention, elementwise, embedding, optimizer, communication, other };
enum class DataType : std::uint8_t { fp32, tf32, fp16, bf16, fp8, int8, int32, int64 };

const char* op_kind_name(OpKind kind);
/// nccl-tests' bus bandwidth factor of a collective over `ranks`: all_reduce 2(n-1)/n; reduce_scatter, all_gather,
/// all_to_all (n-1)/n; broadcast, reduce 1; barrier 0.
double bus_bandwidth_factor(CollectiveKind kind, std::uint32_t ranks);
const char* collective_kind_name(CollectiveKind kind);
const char* kernel_class_name(KernelClass kind);
const char* data_type_name(DataType type);
std::optional<OpKind> parse_op_kind(std::string_view name);
std::optional<CollectiveKind> parse_collective_kind(std::string_view name);
std::optional<KernelClass> parse_kernel_class(std::string_view name);
std::optional<DataType> parse_data_type(std::string_view name);
/// Bytes per element.
int data_type_size(DataType type);

inline constexpr std::uint32_t no_algorithm = UINT32_MAX;
inline constexpr std::uint32_t no_shape = UINT32_MAX;

/// What an alloc/free op holds, for the memory breakdown.
enum class MemoryUse : std::uint8_t { other, parameters, gradients, optimizer_state, activations, logits, buffers };
inline constexpr std::size_t memory_use_count = 7;
const char* memory_use_name(MemoryUse use);
std::optional<MemoryUse> parse_memory_use(std::string_view name);

/// The shape of a GEMM (C[m x n] = A[m x k] B[k x n], `batch` of them), for shape-aware kernel timing.
struct GemmShape {
    std::uint32_t m = 0, n = 0, k = 0, batch = 1;
    bool operator==(const GemmShape&) const = default;
    auto operator<=>(const GemmShape&) const = default;
};

/// What a generated training workload does per iteration, for throughput metrics (all zero for traces).
struct TrainingFacts {
    double model_flops = 0;           // model FLOPs of one iteration, whole job (no recomputation)
    double tokens = 0;                // tokens processed per iteration, whole job
    DataType dtype = DataType::bf16;  // the datatype whose peak MFU is measured against
    // Inference: the op whose end is the first output token (an index into ops), and the tokens each request
    // generates (decode steps); UINT32_MAX and 0 for training.
    std::uint32_t first_token_op = UINT32_MAX;
    std::uint32_t output_tokens = 0;
    // Federated rounds with a deadline (layers generator): each client's work in each round, from its first op
    // (the model's download for a newcomer) to its last local step's optimizer (indices into ops), which the
    // scenario times in a probe run to find the clients that miss the deadline.
    struct ClientRound {
        std::uint32_t round = 0, rank = 0, first_op = 0, last_op = 0;
        bool operator==(const ClientRound&) const = default;
    };
    std::vector<ClientRound> client_rounds;
    double round_deadline_s = -1;  // the deadline, or -1 (none, or the drops already given)
    bool operator==(const TrainingFacts&) const = default;
};

/// One op, 28 bytes; names are interned in OpGraph::names, measured durations kept beside (OpGraph::durations), and
/// its rank is its stream's (OpGraph::rank_of). Fields that only one family of kinds uses share their storage, behind
/// accessors that give the default for the other kinds (memory is most of a large run: 65 M ops for one unfolded
/// iteration on 16,384 GPUs, docs/architecture.md):
/// - `flops()` (compute) with `comm()` and `peer()` (communication);
/// - `shape()` (compute), `algorithm()` (collective) and `tag()` (send/recv);
/// - `collective` (collective) with `memory()` (alloc/free).
/// The size and the kinds share two words of bit fields (the size in 48 bits, through `bytes()` and `set_bytes()`).
/// Every field is 4-byte aligned, so that an op takes 28 bytes, not 32.
/// Set the kind first: a setter writes its field whatever the kind, a getter reads it only for its own kinds.
struct Op {
    Op() = default;
    Op(StreamId stream_, std::uint32_t name_, OpKind kind_ = OpKind::compute,
       KernelClass kernel_class_ = KernelClass::other, DataType dtype_ = DataType::fp16)
        : stream(stream_), name(name_), kind(kind_), kernel_class(kernel_class_), dtype(dtype_) {}

    StreamId stream;         // its rank is the stream's: OpGraph::rank_of
    std::uint32_t name = 0;  // index into OpGraph::names
    // Read and written through the accessors below, stored so that zero is each field's default: the tag, or one
    // more than shape or algorithm; the bits of `flops` (two halves), or the complements of comm (`payload_low`) and
    // peer (`payload_high`).
    std::uint32_t detail_bits = 0;
    std::uint32_t payload_low = 0;
    std::uint32_t payload_high = 0;
    // The size in 48 bits (read and written through bytes() and set_bytes()), then the kinds.
    std::uint32_t bytes_low = 0;
    std::uint32_t bytes_high : 16 = 0;
    OpKind kind : 4 = OpKind::compute;
    KernelClass kernel_class : 3 = KernelClass::other;
    DataType dtype : 3 = DataType::fp16;
    // Collectives: their kind; alloc/free: what they hold, as a MemoryUse (memory() and set_memory()).
    CollectiveKind collective : 3 = CollectiveKind::all_reduce;
    bool eager : 1 = false;  // send only: starts without waiting for the recv (buffered, as ASTRA-sim)

    /// Compute: bytes touched; collective: per-rank buffer; send/recv/copy: message; alloc/free: bytes held.
    [[nodiscard]] std::uint64_t bytes() const { return (std::uint64_t{bytes_high} << 32) | bytes_low; }
    /// A size beyond max_op_bytes is kept as too_large_bytes, never wrapped: readers refuse such sizes where they
    /// read them, and generated graphs are checked for it (sim/scenario/workload_reader.cpp).
    void set_bytes(std::uint64_t bytes) {
        const std::uint64_t kept = std::min(bytes, too_large_bytes);
        bytes_low = static_cast<std::uint32_t>(kept);
        bytes_high = static_cast<std::uint32_t>(kept >> 32);
    }
    /// The largest size an op holds: 2^48 - 2 bytes (256 TiB).
    static constexpr std::uint64_t max_op_bytes = (std::uint64_t{1} << 48) - 2;
    /// What set_bytes() keeps for a larger size.
    static constexpr std::uint64_t too_large_bytes = max_op_bytes + 1;
    /// Alloc/free: what the memory holds (`other` for the other kinds).
    [[nodiscard]] MemoryUse memory() const {
        return kind == OpKind::alloc || kind == OpKind::free ? static_cast<MemoryUse>(collective) : MemoryUse::other;
    }
    void set_memory(MemoryUse use) { collective = static_cast<CollectiveKind>(use); }

    /// Compute: FLOPs (0 for the other kinds).
    [[nodiscard]] double flops() const {
        return kind == OpKind::compute ? std::bit_cast<double>((std::uint64_t{payload_high} << 32) | payload_low) : 0.0;
    }
    void set_flops(double flops) {
        const auto bits = std::bit_cast<std::uint64_t>(flops);
        payload_low = static_cast<std::uint32_t>(bits);
        payload_high = static_cast<std::uint32_t>(bits >> 32);
    }
    /// Collectives and send/recv: the communicator (invalid for the other kinds).
    [[nodiscard]] CommId comm() const { return is_communication() ? CommId{~payload_low} : CommId::invalid(); }
    void set_comm(CommId comm) { payload_low = ~comm.value; }
    /// Send: destination; recv: source (invalid for the other kinds).
    [[nodiscard]] RankId peer() const { return is_point_to_point() ? RankId{~payload_high} : RankId::invalid(); }
    void set_peer(RankId peer) { payload_high = ~peer.value; }
    /// Compute: index into OpGraph::gemm_shapes (GEMM kernels), or no_shape.
    [[nodiscard]] std::uint32_t shape() const { return kind == OpKind::compute ? detail_bits - 1 : no_shape; }
    void set_shape(std::uint32_t shape) { detail_bits = shape + 1; }
    /// Collective: the algorithm hint, an index into OpGraph::names, or no_algorithm.
    [[nodiscard]] std::uint32_t algorithm() const {
        return kind == OpKind::collective ? detail_bits - 1 : no_algorithm;
    }
    void set_algorithm(std::uint32_t algorithm) { detail_bits = algorithm + 1; }
    /// Send/recv: the tag that matches them (0 for the other kinds).
    [[nodiscard]] std::uint32_t tag() const { return is_point_to_point() ? detail_bits : 0; }
    void set_tag(std::uint32_t tag) { detail_bits = tag; }

    [[nodiscard]] bool is_communication() const {
        return kind == OpKind::collective || kind == OpKind::send || kind == OpKind::recv;
    }
    [[nodiscard]] bool is_point_to_point() const { return kind == OpKind::send || kind == OpKind::recv; }
    bool operator==(const Op&) const = default;
};
static_assert(sizeof(Op) == 28 && alignof(Op) == 4);
// (Every value of each kind fits its bit field.)
static_assert(static_cast<int>(OpKind::delay) < 16 && static_cast<int>(KernelClass::other) < 8 &&
              static_cast<int>(DataType::int64) < 8 && static_cast<int>(CollectiveKind::barrier) < 8 &&
              static_cast<int>(MemoryUse::buffers) < 8);

struct Stream {
    RankId rank;
    std::string name;
    bool operator==(const Stream&) const = default;
};

struct Communicator {
    std::string name;
    std::vector<RankId> ranks;  // in communicator order (ring order for ring algorithms)
    /// Folded communicator (symmetry reduction, see OpGraph::job_ranks): every member by job rank, including
    /// those not simulated, whose part of each collective mirrors the simulated members'. Empty: `ranks` is the
    /// whole communicator.
    std::vector<std::uint32_t> job_members;
    [[nodiscard]] bool folded() const { return !job_members.empty(); }
    bool operator==(const Communicator&) const = default;
};

class OpGraph {
public:
    std::uint32_t rank_count = 0;
    std::vector<Stream> streams;
    std::vector<Communicator> comms;
    std::vector<Op> ops;
    std::vector<std::string> names;      // interned op names (and algorithm hints)
    std::vector<GemmShape> gemm_shapes;  // interned GEMM shapes
    TrainingFacts training;
    /// Each op's dependencies besides stream order (ops of its rank added before it), kept for the ops that have
    /// some; read through deps().
    OpDeps op_deps;
    /// Measured durations by op (-1 for an op without one), or empty when no op has one, as for every generated
    /// graph (8 bytes an op that a 35 M-op run does not keep). Kept by add() and set_duration(); code that moves
    /// ops moves their durations with them.
    std::vector<engine::Time> durations;
    std::string source;  // file or generator it came from, for messages
    /// Iteration time measured in the trace this graph was imported from (-1 when unknown).
    engine::Time traced_iteration{-1};
    /// The GPU the trace was recorded on, as the profiler named it ("" when unknown).
    std::string traced_gpu;
    /// What a generator derived from its parameters ("dp: 8", "stage 0 layers: 0-5"), one "key: value" line each,
    /// for resolved.yaml. Not part of the native format.
    std::vector<std::string> derived;
    /// Symmetry reduction: the job has `job_rank_count` ranks, of which only `rank_count` are simulated (the
    /// others behave like them); simulated rank r is job rank job_ranks[r] and runs on that GPU. Empty: every
    /// rank is simulated and rank r is job rank r.
    std::vector<std::uint32_t> job_ranks;
    std::uint32_t job_rank_count = 0;  // 0 when not reduced
    /// Several iterations back to back (traces/iterations.h): the index of each iteration's first op, ascending,
    /// the first 0. Empty: one iteration. TrainingFacts stay per iteration.
    std::vector<std::uint32_t> iteration_starts;
    /// Pipeline stage of each simulated rank, when the generator has stages (the summary's stage table); empty
    /// otherwise. Not part of the native format.
    std::vector<std::uint32_t> rank_stage;

    [[nodiscard]] std::uint32_t iteration_count() const {
        return iteration_starts.empty() ? 1 : static_cast<std::uint32_t>(iteration_starts.size());
    }
    /// The 1-based iteration op `op` belongs to.
    [[nodiscard]] std::uint32_t iteration_of(OpId op) const;

    [[nodiscard]] std::uint32_t job_size() const { return job_ranks.empty() ? rank_count : job_rank_count; }
    [[nodiscard]] std::uint32_t job_rank(RankId rank) const {
        return job_ranks.empty() ? rank.value : job_ranks[rank.index()];
    }

    /// Adds a stream named `name` to `rank` (or returns the existing one).
    StreamId stream(RankId rank, std::string_view name);
    /// Adds a communicator (or returns the existing one of that name, which must have the same ranks).
    CommId communicator(std::string_view name, std::vector<RankId> ranks);
    /// The communicator of that name, if there is one.
    std::optional<CommId> find_communicator(std::string_view name);
    /// Interns a name.
    std::uint32_t intern(std::string_view name);
    /// Interns a GEMM shape (linear in the distinct shapes, which generators keep to a few dozen).
    std::uint32_t intern(const GemmShape& shape);
    /// Appends an op with its dependencies (ops of the same rank added earlier) and its measured duration (-1:
    /// none).
    OpId add(const Op& op, std::span<const OpId> deps = {}, engine::Time duration = engine::Time{-1});
    /// The measured duration of `op`, or -1 when the trace has none.
    [[nodiscard]] engine::Time duration(OpId op) const {
        return durations.empty() ? engine::Time{-1} : durations[op.index()];
    }
    [[nodiscard]] bool has_duration(OpId op) const { return duration(op).count() >= 0; }
    void set_duration(OpId op, engine::Time duration);

    /// The rank an op runs on: its stream's (invalid for a stream that does not exist, which validate() refuses).
    [[nodiscard]] RankId rank_of(const Op& op) const {
        return op.stream.index() < streams.size() ? streams[op.stream.index()].rank : RankId::invalid();
    }
    [[nodiscard]] RankId rank_of(OpId op) const { return rank_of(ops[op.index()]); }
    [[nodiscard]] std::span<const OpId> deps(OpId op) const { return op_deps.of(op); }
    [[nodiscard]] const std::string& name(OpId op) const { return names[ops[op.index()].name]; }
    /// "rank 3 op 17 'fwd.layer2' (all_reduce on 'dp0')" for messages.
    [[nodiscard]] std::string describe(OpId op) const;
    bool operator==(const OpGraph&) const = default;

private:
    struct NameHash {  // heterogeneous lookup: find a string_view without building a string
        using is_transparent = void;
        std::size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
    };
    // Name -> id, for interning; only looked up, never iterated (names keep their insertion order).
    std::unordered_map<std::string, std::uint32_t, NameHash, std::equal_to<>> name_index_;
    // Lookup of streams by (rank, name) and communicators by name, so that adding them is not linear in those
    // already added (it made readers quadratic in the ranks). Rebuilt when `streams` or `comms` were appended to
    // directly; not part of the graph's value (equal graphs may have been built either way).
    struct Lookup {
        std::unordered_map<std::string, std::uint32_t, NameHash, std::equal_to<>> streams, comms;
        bool operator==(const Lookup&) const { return true; }
    };
    Lookup lookup_;
};

/// Whether the members of one call may move different sizes: all_gather (each member's contribution, all_gatherv)
/// and all_to_all (what each member sends, all_to_allv); the other kinds reduce or copy one buffer of one size.
constexpr bool takes_member_sizes(CollectiveKind kind) {
    return kind == CollectiveKind::all_gather || kind == CollectiveKind::all_to_all;
}

/// The collectives of each communicator by member index, each member's in issue order: call k of a
/// communicator is element k of every member's list (ops of ranks that are not members are left out).
std::vector<std::vector<std::vector<OpId>>> collectives_by_member(const OpGraph& graph);

/// Checks what the replay relies on; throws InputError naming the source, rank and op: unknown ids, dependency
/// cycles, a collective not issued by every member, mismatched sizes or kinds across members, unmatched send/recv.
void validate(const OpGraph& graph);

}  // namespace clustersim::traces
