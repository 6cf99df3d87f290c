// Builders of small OpGraphs for replay tests, with exact durations, and a replay on a switchless ring.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "sim/replay/replay.h"
#include "topologies/topology_loader.h"
#include "traces/op_graph.h"

namespace clustersim::testing {

struct GraphBuilder {
    traces::OpGraph g;

    explicit GraphBuilder(std::uint32_t ranks) {
        g.rank_count = ranks;
        g.source = "test graph";
    }
    traces::OpId compute(std::uint32_t rank, const std::string& stream, engine::Time duration,
                         std::vector<traces::OpId> deps = {}) {
        traces::Op op{g.stream(traces::RankId{rank}, stream), g.intern("compute"), traces::OpKind::compute};
        return g.add(op, deps, duration);
    }
    traces::OpId collective(std::uint32_t rank, const std::string& stream, const std::string& comm,
                            std::vector<std::uint32_t> members, std::uint64_t bytes,
                            traces::CollectiveKind kind = traces::CollectiveKind::all_reduce,
                            std::vector<traces::OpId> deps = {}) {
        std::vector<traces::RankId> ranks;
        for (auto m : members) ranks.push_back(traces::RankId{m});
        traces::Op op{g.stream(traces::RankId{rank}, stream), g.intern(comm + " collective"),
                      traces::OpKind::collective};
        op.collective = kind;
        op.set_bytes(bytes);
        op.set_comm(g.communicator(comm, ranks));
        return g.add(op, deps);
    }
    traces::OpId p2p(traces::OpKind kind, std::uint32_t rank, std::uint32_t peer, const std::string& stream,
                     std::uint64_t bytes, std::vector<traces::OpId> deps = {}) {
        const std::uint32_t lo = std::min(rank, peer), hi = std::max(rank, peer);
        traces::Op op{g.stream(traces::RankId{rank}, stream), g.intern(kind == traces::OpKind::send ? "send" : "recv"),
                      kind};
        op.set_bytes(bytes);
        op.set_peer(traces::RankId{peer});
        op.set_comm(g.communicator("p2p" + std::to_string(lo) + "-" + std::to_string(hi),
                                   {traces::RankId{lo}, traces::RankId{hi}}));
        return g.add(op, deps);
    }
};

/// A communicator of consecutive ranks, named "g<first rank>".
struct RankGroup {
    std::string comm;
    std::vector<std::uint32_t> members;
};

/// `ranks` cut into groups of `group` consecutive ranks (the ranks left over belong to none).
inline std::vector<RankGroup> consecutive_groups(std::uint32_t ranks, std::uint32_t group) {
    std::vector<RankGroup> groups;
    for (std::uint32_t first = 0; first + group <= ranks; first += group) {
        RankGroup& g = groups.emplace_back();
        g.comm = "g" + std::to_string(first);
        for (std::uint32_t r = first; r < first + group; ++r) g.members.push_back(r);
    }
    return groups;
}

/// A send and its recv between two random ranks of `ranks` on stream "side" (up to 8 MB), the send after compute of
/// up to `latest` ps: traffic at a random time that may meet a call on its links.
inline void random_side_transfer(GraphBuilder& b, std::mt19937_64& rng, std::uint32_t ranks, std::int64_t latest) {
    const auto from = static_cast<std::uint32_t>(rng() % ranks);
    const auto to = static_cast<std::uint32_t>((from + 1 + rng() % (ranks - 1)) % ranks);
    const std::uint64_t bytes = 1 + rng() % 8'000'000;
    const auto wait = b.compute(from, "side", engine::Time{static_cast<std::int64_t>(rng() % latest)});
    b.p2p(traces::OpKind::send, from, to, "side", bytes, {wait});
    b.p2p(traces::OpKind::recv, to, from, "side", bytes);
}

/// A ring of `gpus` GPUs with the given link bandwidth and latency.
inline topo::Cluster ring_cluster(int gpus, const std::string& bandwidth, const std::string& latency) {
    return topo::load_topology("ring",
                               {"gpus=" + std::to_string(gpus), "bandwidth=" + bandwidth, "latency=" + latency});
}

/// Exact options: no compute slowdown under communication, one channel per transfer, no protocol latencies.
inline sim::ReplayOptions exact_options() {
    sim::ReplayOptions o;
    o.compute.slowdown_during_comm = 0;
    o.compute.min_kernel_time = engine::Time{0};
    o.channels = 1;
    o.protocols = false;
    return o;
}

}  // namespace clustersim::testing
