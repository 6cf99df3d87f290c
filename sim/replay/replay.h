// Replay of an OpGraph on a Cluster: ranks on GPUs, CUDA stream semantics, compute timed by the compute model,
// communication as flows on the flow-level network. The result is a Timeline of what happened.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster_events.h"
#include "sim/collectives/collective_algorithm.h"
#include "sim/collectives/nccl_tuner.h"
#include "sim/compute_model.h"
#include "sim/network/flow_network.h"
#include "sim/variability.h"
#include "topologies/cluster.h"
#include "traces/op_graph.h"
#include "traces/timeline.h"

namespace clustersim::sim {

/// Where a running replay is, for progress reports.
struct ReplayProgress {
    std::uint64_t ops_done = 0;
    std::uint64_t ops = 0;
    std::uint64_t events = 0;
    engine::Time now{};
};

/// Called every 2^16 events with the replay's progress; a plain function and a context pointer, so the event
/// loop pays one branch per event.
struct ProgressReporter {
    void (*report)(void* context, const ReplayProgress& progress) = nullptr;
    void* context = nullptr;
};

struct ReplayOptions {
    NetworkOptions network;
    ComputeModel compute;
    /// GPU (index into Cluster::gpus()) of each rank; empty: rank i on GPU i.
    std::vector<std::uint32_t> rank_to_gpu;
    /// Forces one algorithm (index in collective_algorithms()) for every collective that has a form in it;
    /// nullopt: the op's hint or the kind's default.
    std::optional<std::size_t> algorithm;
    /// Algorithms for the collectives of named communicators (below the run's forced one, above op hints).
    std::vector<std::pair<std::string, std::size_t>> communicator_algorithms;
    /// Pipelining chunks of trees, chains and NVLS: 0 (default) chunks as NCCL does, one pipeline step of the
    /// protocol per channel (nccl_step_bytes; Simple's 512 KiB without protocols), at most max_auto_chunks and
    /// at most max_auto_pieces / (members x channels) (not below 8), which bounds a call's transfers; a positive
    /// count fixes it (small messages still go whole below 64 KiB a chunk).
    std::uint32_t tree_chunks = 0;
    static constexpr std::uint32_t max_auto_chunks = 256;
    static constexpr std::uint64_t max_auto_pieces = 1ULL << 18;
    /// Model NCCL's protocols: pick (algorithm, protocol) with NCCL's tuner when no algorithm is forced, add
    /// the protocol's base and per-hop latencies, and its wire overhead (LL x2, LL128 x128/120). Off: transfers
    /// cost only the network's latency and bandwidth (the alpha-beta closed forms).
    bool protocols = true;
    /// Run ring plans from their schedule (ring_schedule.h: state only for transfers in flight); off: every
    /// transfer listed before the call starts, the reference form (the same results, more memory and time).
    bool ring_schedules = true;
    /// Time a collective call in closed form when no other traffic shares its links and its own transfers do not
    /// overlap on one (each transfer then alone on its route, at its cap: the formulas the network would apply,
    /// without its events); off: every call as flows. Exact: a flow that later attaches to a link such a call holds
    /// makes the replay start over with that communicator's calls as flows (replay_closed_form.cpp).
    bool closed_form = true;
    /// Time a collective call that repeats an earlier one of its communicator (the same kind, size, datatype, plan
    /// and protocol, every member arriving at one instant), when neither shared a link with other traffic while it
    /// ran, from the earlier one's record: each member's end, busy time and ideal end, what each link carried and
    /// when, and its contention delay, all shifted to the call's start, without its flows. A run alone on its links
    /// depends only on its own starts, sizes and routes (max-min rates decompose over coupled flows), so this is the
    /// exact model up to rounding and the order of one instant's events (models.md "Repeated calls"); a flow that
    /// attaches to a link such a call holds makes the replay start over with that communicator's calls as flows, as
    /// for closed forms (replay_repeats.cpp). A ring call in closed form whose members arrive at one instant is
    /// likewise committed from the record of its communicator's first call of its key, exactly as the closed form
    /// would commit it (replay_closed_records.cpp). Off: every call as flows (or in closed form, each timed anew).
    bool repeat_calls = true;
    /// Forces a protocol (with protocols on); nullopt: NCCL's choice.
    std::optional<NcclProtocol> protocol;
    /// With protocols on, the fraction of a link's raw bandwidth NCCL's transfers reach, by LinkKind (nvlink,
    /// pcie, infiniband, ethernet, wan, socket). NVLink: 0 takes the GPU's own (GpuSpec::nvlink_efficiency, NCCL's
    /// per-link figure for its architecture: V100 and A100 0.80, H100 0.824); PCIe: 12 of 16 GB/s (PCI_BW, Gen3
    /// x16); InfiniBand: 48 of 50 GB/s achievable per NDR NIC (nccl-tests issues 267 and 309); Ethernet and WAN
    /// like InfiniBand; CPU sockets like PCIe.
    std::array<double, 6> nccl_link_efficiency = {0, 0.75, 0.96, 0.96, 0.96, 0.75};
    /// Each collective transfer is split over this many parallel flows (NCCL channels), each with its own ECMP
    /// path, as NCCL spreads a ring over several channels and queue pairs.
    std::uint32_t channels = 8;
    /// Link counters in the timeline: only links that carried traffic, each with its totals (bytes, peak rate,
    /// contention delay).
    bool link_counters = true;
    /// Of those, the `link_series` links that carried the most bytes (ties by link order: the order in which the
    /// Perfetto writer and the report pick theirs) also get their rate over time (points and bins); the others'
    /// are left empty. A series is a few KB: kept for every link, they were 0.5 GB of a 16,384-GPU run that no
    /// output read. Set it to at least what the outputs draw (PerfettoOptions::max_link_counters,
    /// report::ReportOptions::heatmap_links); SIZE_MAX keeps every link's.
    std::size_t link_series = 64;
    /// A replay inside another (a folded call's shape, timed alone): its network line and restarts are logged at
    /// trace level (-vv), not once per shape at -v.
    bool nested = false;
    /// A ring call alone on the cluster that is symmetric (its per-channel rings images of one another: NCCL's
    /// rings across switched nodes, each node's GPUs and rails rotated; and each ring the same under a shift by a
    /// group of positions: identical leaf groups) is simulated as one representative group of one ring, each link
    /// standing for its orbit under the symmetries, checked call by call (replay_symmetry_fold.cpp; models.md
    /// "Calls folded by symmetry"). The call's end (the makespan) is the unfolded run's; per-member ends, flow
    /// counts and link counters are the folded run's. For callers that read only the call's time: `collective`,
    /// and a folded call's shape timed alone.
    bool fold_by_symmetry = false;
    /// How a folded collective (symmetry reduction) is timed: by the cost model (NCCL's formulas; fast), or
    /// by simulating the call on its whole communicator alone on the cluster, once per call shape (exact on an
    /// otherwise idle network, slower: a 384-member ring is about a million flows).
    enum class FoldModel : std::uint8_t { cost_model, flows };
    FoldModel fold_model = FoldModel::cost_model;
    /// How collectives are timed: as flows on the network (contention, skew, the algorithm's steps), or, for a
    /// fast approximate run, every call by the cost model folded collectives use (NCCL's formulas on the
    /// cluster's bandwidths, once all members have arrived; no contention between calls).
    enum class CollectiveModel : std::uint8_t { flows, cost_model };
    CollectiveModel collective_model = CollectiveModel::flows;
    /// When each rank starts (several jobs on one cluster, each from its start time); empty: every rank at 0.
    std::vector<engine::Time> rank_start;
    /// Changes to the cluster during the run (links degraded, failing, restored; GPUs failing), in time order.
    std::vector<ClusterEvent> cluster_events;
    /// Stragglers and per-kernel jitter (none by default), with the seed of the jitter.
    Variability variability;
    /// Progress reports (nothing by default; nested replays of folded calls never report).
    ProgressReporter progress;
};

/// How one collective call ran.
struct CollectiveRecord {
    traces::CommId comm;
    std::size_t algorithm = 0;  // index in collective_algorithms()
    bool modelled_protocol = false;
    NcclProtocol protocol = NcclProtocol::simple;
    double nccl_predicted_us = 0;  // NCCL's own cost model, for comparison
    engine::Time first_arrival{};
    engine::Time last_arrival{};
    engine::Time end{};
    traces::OpId op;          // a member's op (its kind and size)
    std::uint64_t bytes = 0;  // the first member's size
};

struct ReplayResult {
    traces::Timeline timeline;
    std::uint64_t events = 0;
    std::uint64_t flows = 0;
    std::uint64_t rate_updates = 0;
    std::uint64_t flows_reassigned = 0;  // solver entities (flows, classes) recomputed, summed over updates
    std::uint64_t flows_rerated = 0;     // solver entities whose rate changed, summed over updates
    std::uint64_t classes_formed = 0;    // classes of identical flows (FlowNetwork), their flows, those split
    std::uint64_t flows_in_classes = 0;
    std::uint64_t classes_split = 0;
    std::uint64_t bytes_on_network = 0;
    /// Collective calls timed in closed form (ReplayOptions::closed_form), and the times the replay started over
    /// because one of them shared a link after all.
    std::uint64_t closed_form_calls = 0;
    std::uint32_t closed_form_restarts = 0;
    /// Of the calls timed in closed form, those committed from the record of an earlier call of their key.
    std::uint64_t closed_form_repeats = 0;
    /// Collective calls timed from an earlier call's record (ReplayOptions::repeat_calls), and the records made.
    std::uint64_t repeated_calls = 0;
    std::uint64_t call_records = 0;
    /// Traffic between sites: bytes over WAN links, and the time some WAN link carried traffic (to the link
    /// utilization's bin width, 1/256 of the run or finer).
    double wan_bytes = 0;
    engine::Time wan_busy{};
    std::vector<CollectiveRecord> collectives;  // in order of creation (per communicator, in issue order)
};

/// Runs the replay. Throws InputError when the graph deadlocks (naming what each blocked rank waits for) or
/// does not fit the cluster (more ranks than GPUs, a bad rank mapping).
ReplayResult replay(const traces::OpGraph& graph, const topo::Cluster& cluster, const ReplayOptions& options);

}  // namespace clustersim::sim
