// The constants and formula shapes of NCCL's tuner (reference: ../shared/reference/nccl-cost-model.md). Not
// modelled: CollNet, NVLSTree (NVLS across nodes), PAT, the tree correction factors by size, and the channel/thread
// shrinking for small messages.
#include "sim/collectives/nccl_tuner.h"

#include <algorithm>
#include <cmath>

namespace clustersim::sim {

using traces::CollectiveKind;

namespace {
// [algorithm: tree, ring][protocol: LL, LL128, Simple], microseconds.
constexpr double base_latency[2][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}};
constexpr double nvlink_latency[2][3] = {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}};
constexpr double pci_latency[2][3] = {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}};
constexpr double net_latency[2][3] = {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}};
// By architecture (Volta, Ampere, Hopper); index2 = nodes 1 / 2 / >= 4.
constexpr double ll_max_bw[3][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}};
constexpr double per_ch_max_ring_ll128_bw[3] = {20.0, 20.0, 36.7};
constexpr double per_ch_max_tree_ll128_bw[3][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}};
constexpr double per_ch_max_tree_bw[3][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};
constexpr double net_overhead_us = 1.0;  // per inter-node ring step (Intel), x3 for Simple
constexpr double nvls_nvlink_latency_us = 25.0;
constexpr double nvls_efficiency = 0.85;  // Hopper

std::size_t node_index(std::uint32_t nodes) { return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2; }
}  // namespace

const char* nccl_algorithm_name(NcclAlgorithm a) {
    return a == NcclAlgorithm::tree ? "tree" : a == NcclAlgorithm::ring ? "ring" : "nvls";
}
const char* nccl_protocol_name(NcclProtocol p) {
    return p == NcclProtocol::ll ? "LL" : p == NcclProtocol::ll128 ? "LL128" : "Simple";
}
std::optional<NcclProtocol> parse_nccl_protocol(std::string_view name) {
    if (name == "LL") return NcclProtocol::ll;
    if (name == "LL128") return NcclProtocol::ll128;
    if (name == "Simple") return NcclProtocol::simple;
    return std::nullopt;
}

double nccl_hop_latency_us(bool network, bool nvlink, NcclAlgorithm a, NcclProtocol p) {
    if (a == NcclAlgorithm::nvls) return 0;  // its latency is the call's (nccl_base_latency_us)
    const auto ai = static_cast<std::size_t>(a), pi = static_cast<std::size_t>(p);
    if (network) return net_latency[ai][pi];
    return nvlink ? nvlink_latency[ai][pi] : pci_latency[ai][pi];
}

double nccl_base_latency_us(NcclAlgorithm a, NcclProtocol p) {
    if (a == NcclAlgorithm::nvls) return nvls_nvlink_latency_us;  // base 0 + hwLat[NVLINK][NVLS][Simple]
    return base_latency[static_cast<std::size_t>(a)][static_cast<std::size_t>(p)];
}

double nccl_nvls_efficiency() { return nvls_efficiency; }

std::uint64_t nccl_step_bytes(NcclProtocol p) {
    switch (p) {
        case NcclProtocol::ll:
            return 8 * 512 * 16 / 2;
        case NcclProtocol::ll128:
            return 120 * 640 * 8 / 128 * 120;
        case NcclProtocol::simple:
            return (4U << 20) / 8;
    }
    return (4U << 20) / 8;
}

double nccl_wire_factor(NcclProtocol p) {
    switch (p) {
        case NcclProtocol::ll:
            return 2.0;
        case NcclProtocol::ll128:
            return 128.0 / 120.0;
        case NcclProtocol::simple:
            return 1.0;
    }
    return 1.0;
}

std::uint64_t nccl_bytes(CollectiveKind kind, std::uint64_t bytes, std::uint32_t ranks) {
    return kind == CollectiveKind::all_gather ? bytes * std::max<std::uint32_t>(1, ranks) : bytes;
}

std::optional<NcclEstimate> nccl_estimate(CollectiveKind kind, std::uint64_t bytes, NcclAlgorithm a, NcclProtocol p,
                                          const NcclTopologyInfo& info) {
    if (a == NcclAlgorithm::tree && kind != CollectiveKind::all_reduce) return std::nullopt;
    if (a == NcclAlgorithm::nvls) {
        // NVLS: Simple only, all-reduce in one node; intraBw = bwIntra x nvlsEff x (nCh-1)/nCh x 2.
        if (!info.nvls || kind != CollectiveKind::all_reduce || p != NcclProtocol::simple) return std::nullopt;
        const double n = std::max<std::uint32_t>(2, info.ranks);
        const double ch = std::max<std::uint32_t>(2, info.channels);
        const double bus_bw = info.intra_bw_gbps * nvls_efficiency * (ch - 1) / ch * 2;
        const double alg_bw = bus_bw * n / (2 * (n - 1));
        return NcclEstimate{a, p, nvls_nvlink_latency_us + static_cast<double>(bytes) / (1000.0 * alg_bw),
                            nvls_nvlink_latency_us, bus_bw};
    }
    const std::uint32_t n = std::max<std::uint32_t>(1, info.ranks), nodes = std::max<std::uint32_t>(1, info.nodes);
    const std::uint32_t ppn = std::max<std::uint32_t>(1, n / nodes);
    const auto arch = static_cast<std::size_t>(info.arch), ni = node_index(nodes);
    const double nsteps = kind == CollectiveKind::all_reduce ? 2.0 * (n - 1)
                          : (kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::all_gather) ? n - 1.0
                                                                                                           : n;
    // Bus bandwidth: the ring is bounded by its slowest hop, inside a node or across nodes.
    const double channels = info.channels;
    const double bus = nodes == 1 ? info.intra_bw_gbps : std::min(info.intra_bw_gbps, info.inter_bw_gbps);
    double bus_bw = bus;
    if (a == NcclAlgorithm::ring) {
        if (p == NcclProtocol::ll) bus_bw = std::min(ll_max_bw[arch][ni], 0.5 * bus_bw);
        if (p == NcclProtocol::ll128) bus_bw = std::min(0.92 * bus_bw, channels * per_ch_max_ring_ll128_bw[arch]);
    } else {
        bus_bw = std::min(0.92 * bus_bw, channels * per_ch_max_tree_bw[arch][ni]);
        if (p == NcclProtocol::ll) bus_bw = std::min(bus_bw / 3.8, ll_max_bw[arch][ni]);
        if (p == NcclProtocol::ll128)
            bus_bw = std::min(bus_bw * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                              channels * per_ch_max_tree_ll128_bw[arch][ni]);
    }
    const double alg_bw = a == NcclAlgorithm::ring ? bus_bw * n / std::max(1.0, nsteps) : bus_bw * 0.5;
    const auto ai = static_cast<std::size_t>(a), pi = static_cast<std::size_t>(p);
    double intra = info.nvlink ? nvlink_latency[ai][pi] : pci_latency[ai][pi];
    const double inter = net_latency[ai][pi];
    double latency = base_latency[ai][pi];
    if (a == NcclAlgorithm::ring) {
        if (nodes > 1) intra = std::max(intra, net_overhead_us * (p == NcclProtocol::simple ? 3.0 : 1.0));
        const double n_inter = nodes == 1 ? 0.0 : kind == CollectiveKind::all_reduce ? 2.0 * (nodes - 1) : nodes - 1.0;
        latency += (nsteps - n_inter) * intra + n_inter * inter;
    } else {
        latency += 2.0 * ((ppn - 1) * intra + std::log2(static_cast<double>(nodes)) * inter);
    }
    NcclEstimate e{a, p, latency + static_cast<double>(bytes) / (1000.0 * alg_bw), latency, bus_bw};
    return e;
}

NcclEstimate nccl_choose(CollectiveKind kind, std::uint64_t bytes, const NcclTopologyInfo& info,
                         std::optional<NcclAlgorithm> algorithm, std::optional<NcclProtocol> protocol) {
    std::optional<NcclEstimate> best;
    for (const NcclAlgorithm a : {NcclAlgorithm::tree, NcclAlgorithm::ring, NcclAlgorithm::nvls}) {
        if (algorithm && a != *algorithm) continue;
        for (const NcclProtocol p : {NcclProtocol::ll, NcclProtocol::ll128, NcclProtocol::simple}) {
            if (protocol && p != *protocol) continue;
            const auto e = nccl_estimate(kind, bytes, a, p, info);
            if (e && (!best || e->time_us < best->time_us)) best = e;
        }
    }
    if (!best) best = nccl_estimate(kind, bytes, NcclAlgorithm::ring, protocol.value_or(NcclProtocol::simple), info);
    return *best;
}

}  // namespace clustersim::sim
