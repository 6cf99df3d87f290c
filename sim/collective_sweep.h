// A simulated nccl-tests: one collective over a communicator, swept over message sizes, reporting time,
// algorithm bandwidth and bus bandwidth as nccl-tests does, with the algorithm and protocol chosen and NCCL's
// own predicted time; and a concurrent mode (tensor-parallel all-reduces in every node while data-parallel
// all-reduces cross the fabric) that shows what contention does to each.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/replay/replay.h"
#include "topologies/cluster.h"

namespace clustersim::sim {

struct CollectiveSweepOptions {
    traces::CollectiveKind kind = traces::CollectiveKind::all_reduce;
    std::uint64_t min_bytes = 8;
    std::uint64_t max_bytes = 1ULL << 30;
    double factor = 2;
    ReplayOptions replay;  // algorithm, protocol, channels, network model
    /// With NCCL's choice, also simulate its other algorithms (CollectiveRow::fastest_*).
    bool compare_algorithms = true;
    /// Sizes simulated at once, each on its own thread; rows come in size order, the same as on one thread.
    unsigned threads = 1;
    /// Whether NCCL's alternatives are simulated beside its pick: asked for, no algorithm forced, NCCL's protocols
    /// modelled (its tuner picks), and a call with a choice of algorithm (all-to-all has one form).
    [[nodiscard]] bool compares() const {
        return compare_algorithms && !replay.algorithm && replay.protocols &&
               kind != traces::CollectiveKind::all_to_all;
    }
};

struct CollectiveRow;
/// Called with each row as soon as it is computed (a caller prints and flushes it, so an interrupted sweep keeps
/// its finished rows): a plain function and a context pointer.
struct RowSink {
    void (*row)(void* context, const CollectiveRow& row) = nullptr;
    void* context = nullptr;
};

struct CollectiveRow {
    std::uint64_t bytes = 0;  // nccl-tests "size": the output for all_gather, the buffer otherwise
    engine::Time time{};
    double algbw_gbps = 0;
    double busbw_gbps = 0;
    std::string algorithm;
    std::string protocol;
    double nccl_predicted_us = 0;
    // With NCCL's choice (no forced algorithm): the fastest of the algorithms NCCL could have chosen (ring,
    // double tree, NVLS where the call has a form in them), each simulated with its best protocol. Where it
    // differs from `algorithm`, NCCL's model disagrees with the simulation of its own alternatives.
    std::string fastest_algorithm;
    std::string fastest_protocol;
    engine::Time fastest_time{};
};

/// One collective per member of each group (its communicator), all issued at time zero.
traces::OpGraph collective_graph(std::uint32_t ranks, const std::vector<std::vector<traces::RankId>>& groups,
                                 traces::CollectiveKind kind, std::uint64_t bytes);

/// One call per size on a communicator of every GPU of the cluster.
std::vector<CollectiveRow> run_collective_sweep(const topo::Cluster& cluster, const CollectiveSweepOptions& options,
                                                RowSink sink = {});

struct ConcurrentRow {
    std::uint64_t bytes = 0;
    engine::Time tp_alone{}, dp_alone{}, tp_together{}, dp_together{};
};

/// All-reduces of each size inside every node (tensor parallel) and across nodes among the GPUs of each local
/// index (data parallel), each alone and both at once.
std::vector<ConcurrentRow> run_concurrent_sweep(const topo::Cluster& cluster, const CollectiveSweepOptions& options);

}  // namespace clustersim::sim
