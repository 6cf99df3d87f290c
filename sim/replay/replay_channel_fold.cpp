// A call's channels folded by symmetry (ReplayOptions::fold_channels; models.md "Channels folded by symmetry").
//
// Across switched nodes NCCL gives each channel its own ring (ring.cpp: ring k is ring 0 with every node's GPUs
// rotated by k, so each channel leaves its nodes on another rail). For a call alone on the cluster, ring k's
// transfers are then ring 0's moved by a permutation of the links: checked here, edge by edge, as one bijection rho
// that takes ring k's route of each edge to ring k+1's link by link (ring R-1's to ring 0's), keeps every link's
// kind, bandwidth, latency and NCCL efficiency, keeps whether the edge crosses nodes and the GPU models at its ends,
// and whose every orbit has exactly R links (rho^R is the identity). The rings' steps, pieces and phases are the
// same formulas on equal bytes, and every member starts at once.
//
// Then the run is symmetric under rho: the max-min allocation is unique, so a transfer of ring k has the rate of
// its image in ring 0 at every instant, and every channel's transfers start and end when ring 0's do. A link l
// carries the rates of the transfers of every ring that cross it, which by the symmetry is what ring 0's transfers
// carry on all R links of l's orbit together: sum over k and over x through l of r(rho^-k x) = sum over x of r(x)
// times the number of links of orbit(l) on x's route. So ring 0 alone, every link of its routes replaced by its
// orbit's representative (the lowest id), meets the same capacity constraints with the same rates, and gives
// every transfer's times and the call's end; a route that crosses one orbit twice is not folded (kept simple).
// R channels cost one ring's flows. Only the call's end (the makespan) is the unfolded run's: each member's own end
// is its ring-0 transfers' (a member's channels are other members' ring-0 transfers moved by rho).
#include <algorithm>

#include <spdlog/spdlog.h>

#include "engine/log.h"
#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

bool ReplayEngine::fold_channels(std::uint32_t index) {
    Instance& inst = instances_[index];
    const std::vector<RingSchedule>& rings = inst.plan.rings();
    const std::size_t ring_count = rings.size();
    const auto& ranks = g_.comms[inst.comm.index()].ranks;
    // The call alone (every op of the run is one of its members'), its members starting together, on a cluster
    // that does not change.
    if (!options_.fold_channels || ring_count < 2 || !inst.plan.channels_planned || !link_alias_.empty() ||
        g_.comms.size() != 1 || g_.ops.size() != ranks.size() || !options_.rank_start.empty() ||
        options_.variability.active() || !options_.cluster_events.empty() || options_.network.record_flows)
        return false;
    const RingSchedule& first = rings.front();
    const auto same_shape = [&](const RingSchedule& r) {
        if (r.width() != first.width() || r.steps() != first.steps() || r.bytes != first.bytes ||
            r.whole != first.whole || (r.relay == UINT32_MAX) != (first.relay == UINT32_MAX) ||
            r.phases.size() != first.phases.size())
            return false;
        for (std::size_t p = 0; p < r.phases.size(); ++p) {
            if (r.phases[p].steps != first.phases[p].steps || r.phases[p].reduce != first.phases[p].reduce)
                return false;
        }
        return true;
    };
    if (!std::all_of(rings.begin(), rings.end(), same_shape)) return false;
    // Every ring's route of every edge, as the transfers would route them (ECMP by connection).
    const std::uint32_t width = first.width();
    std::vector<topo::LinkId> pool;
    std::vector<std::size_t> offsets{0};
    std::vector<std::pair<topo::DeviceId, topo::DeviceId>> ends;
    std::vector<topo::LinkId> route;
    for (const RingSchedule& ring : rings) {
        for (std::uint32_t slot = 0; slot < width; ++slot) {
            const auto [s, d] = ring.ends(RingSchedule::At{0, slot});
            if (s == switch_endpoint || d == switch_endpoint) return false;
            const topo::DeviceId src = gpu_of(ranks[s]), dst = gpu_of(ranks[d]);
            route.clear();
            net_.router().route(src, dst, connection_key(inst.comm.value, src.value, dst.value), route);
            pool.insert(pool.end(), route.begin(), route.end());
            offsets.push_back(pool.size());
            ends.emplace_back(src, dst);
        }
    }
    // rho, from each edge of ring k to the same edge of ring k + 1 (mod R): one bijection, keeping what a
    // transfer's timing reads.
    const std::size_t link_count = cluster_.links().size();
    std::vector<std::uint32_t> image(link_count, UINT32_MAX), preimage(link_count, UINT32_MAX);
    const auto alike = [&](topo::LinkId a, topo::LinkId b) {
        const topo::Link &x = cluster_.link(a), &y = cluster_.link(b);
        return x.kind == y.kind && x.bandwidth_bytes_per_s == y.bandwidth_bytes_per_s && x.latency == y.latency &&
               link_efficiency(x) == link_efficiency(y);
    };
    for (std::size_t k = 0; k < ring_count; ++k) {
        const std::size_t next = (k + 1) % ring_count;
        for (std::uint32_t slot = 0; slot < width; ++slot) {
            const std::size_t e = k * width + slot, f = next * width + slot;
            const auto [a_src, a_dst] = ends[e];
            const auto [b_src, b_dst] = ends[f];
            const topo::Device &as = cluster_.device(a_src), &ad = cluster_.device(a_dst);
            const topo::Device &bs = cluster_.device(b_src), &bd = cluster_.device(b_dst);
            if ((as.node != ad.node) != (bs.node != bd.node) || as.gpu_spec != bs.gpu_spec ||
                ad.gpu_spec != bd.gpu_spec || offsets[e + 1] - offsets[e] != offsets[f + 1] - offsets[f])
                return false;
            for (std::size_t h = 0; h < offsets[e + 1] - offsets[e]; ++h) {
                const topo::LinkId a = pool[offsets[e] + h], b = pool[offsets[f] + h];
                if (!alike(a, b)) return false;
                if (image[a.index()] == UINT32_MAX && preimage[b.index()] == UINT32_MAX) {
                    image[a.index()] = b.value;
                    preimage[b.index()] = a.value;
                } else if (image[a.index()] != b.value || preimage[b.index()] != a.value) {
                    return false;
                }
            }
        }
    }
    // Every orbit of exactly R links, each represented by its lowest id.
    std::vector<topo::LinkId> alias(link_count);
    for (std::size_t l = 0; l < link_count; ++l) alias[l] = topo::LinkId::from_index(l);
    std::vector<std::uint8_t> done(link_count, 0);
    std::size_t orbits = 0;
    for (std::size_t l = 0; l < link_count; ++l) {
        if (image[l] == UINT32_MAX || done[l]) continue;
        std::uint32_t lowest = static_cast<std::uint32_t>(l), at = static_cast<std::uint32_t>(l);
        std::size_t length = 0;
        do {
            at = image[at];
            if (at == UINT32_MAX || ++length > ring_count) return false;
            lowest = std::min(lowest, at);
        } while (at != l);
        if (length != ring_count) return false;
        ++orbits;
        do {
            alias[at] = topo::LinkId::from_index(lowest);
            done[at] = 1;
            at = image[at];
        } while (at != l);
    }
    // Ring 0's routes crossing each orbit at most once.
    std::vector<std::uint32_t> seen(link_count, UINT32_MAX);
    for (std::uint32_t slot = 0; slot < width; ++slot) {
        for (std::size_t i = offsets[slot]; i < offsets[slot + 1]; ++i) {
            const std::uint32_t rep = alias[pool[i].index()].value;
            if (seen[rep] == slot) return false;
            seen[rep] = slot;
        }
    }
    // Ring 0 alone, on the representatives (route_once maps every route it computes from here on).
    link_alias_ = std::move(alias);
    CollectivePlan folded;
    folded.channels_planned = true;
    folded.add_ring(first);
    inst.plan = std::move(folded);
    engine::layer_log("sim").log(options_.nested ? spdlog::level::trace : spdlog::level::debug,
                                 "{}: the call's {} channels folded into one by symmetry ({} orbits of {} links)",
                                 g_.source, ring_count, orbits, ring_count);
    return true;
}

}  // namespace clustersim::sim
