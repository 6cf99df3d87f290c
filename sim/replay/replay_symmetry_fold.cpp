// A call folded by the symmetries of its rings (ReplayOptions::fold_by_symmetry; models.md "Calls folded by
// symmetry").
//
// Two symmetries of a ring call alone on the cluster, each checked on the routes the transfers would take:
// - channels: across switched nodes NCCL gives each channel its own ring (ring.cpp: ring k is ring 0 with every
//   node's GPUs rotated by k), so ring k's edge i is ring 0's edge i moved by a permutation rho of the links;
// - a shift of the ring: on a fabric of identical groups (the leaf groups of a rail-optimized fabric), edge i + P
//   of a ring is edge i moved by a permutation sigma of the links, P the positions of one group.
// A generator is checked edge by edge: the link map from each edge's route to its image's, hop by hop, must be one
// bijection that keeps every link's kind, bandwidth, latency and NCCL efficiency, whether the edge crosses nodes
// and the GPU models at its ends. rho and sigma must commute, and the group they generate must move every link of
// the call's routes through an orbit of exactly |group| links (R rings x n / P shifts). The rings' steps, phases and
// pieces are the same formulas on equal bytes (for a shift: equal pieces, no relay), and every member starts at once.
//
// Then the run is symmetric under the group: the max-min allocation is unique, so a transfer has the rate of its
// image at every instant, and by induction over events every image of a transfer starts and ends when it does. A
// link l carries the rates of every transfer that crosses it, which by the symmetry is sum over the representative
// transfers x (ring 0's first P edges) of r(x) times the number of links of l's orbit on x's route. So the
// representatives alone, every link replaced by its orbit's representative (the lowest id), meet the same capacity
// constraints with the same rates, and give every transfer's times and the call's end; a route that crosses one
// orbit twice is not folded (kept simple). Ring 0's first P positions run as a ring of their own whose last edge
// sends to position 0 in place of position P (the transfer it stands for), on that real edge's route
// (RingSchedule::positions). Only the call's end (the makespan) is the unfolded run's: each simulated member's own
// end is its representative transfers', and the other members have none.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "engine/log.h"
#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

namespace {

/// A permutation of the call's links, found from pairs of routes (each link of one edge's route to the link at the
/// same hop of its image's).
struct LinkMap {
    std::vector<std::uint32_t> image;
    std::vector<std::uint32_t> preimage;
};

}  // namespace

bool ReplayEngine::fold_by_symmetry(std::uint32_t index) {
    Instance& inst = instances_[index];
    const std::vector<RingSchedule>& rings = inst.plan().rings();
    const std::size_t ring_count = rings.size();
    const auto& ranks = g_.comms[inst.comm.index()].ranks;
    // The call alone (every op of the run is one of its members'), its members starting together, on a cluster
    // that does not change; and more transfers than the cluster has links (the check costs a few passes over the
    // links: a small call, such as a folded tensor-parallel shape timed alone, runs as it is sooner).
    if (!options_.fold_by_symmetry || !link_alias_.empty() || g_.comms.size() != 1 ||
        inst.plan().size() <= cluster_.links().size() || g_.ops.size() != ranks.size() ||
        !options_.rank_start.empty() || options_.variability.active() || !options_.cluster_events.empty() ||
        options_.network.record_flows)
        return false;
    const RingSchedule& first = rings.front();
    const auto same_shape = [&](const RingSchedule& r) {
        if (r.members() != first.members() || r.width() != first.width() || r.steps() != first.steps() ||
            r.bytes != first.bytes || r.whole != first.whole || r.positions != 0 ||
            (r.relay == UINT32_MAX) != (first.relay == UINT32_MAX) || r.phases.size() != first.phases.size())
            return false;
        for (std::size_t p = 0; p < r.phases.size(); ++p) {
            if (r.phases[p].steps != first.phases[p].steps || r.phases[p].reduce != first.phases[p].reduce)
                return false;
        }
        return true;
    };
    if (!std::all_of(rings.begin(), rings.end(), same_shape)) return false;
    // Every ring's route of every edge, as the transfers would route them (ECMP by connection).
    const std::uint32_t n = first.members(), width = first.width();
    std::vector<topo::LinkId> pool;
    std::vector<std::size_t> offsets{0};
    std::vector<std::pair<topo::DeviceId, topo::DeviceId>> ends;
    std::vector<topo::LinkId> route;
    std::vector<std::uint8_t> multipath;
    for (const RingSchedule& ring : rings) {
        for (std::uint32_t slot = 0; slot < width; ++slot) {
            const auto [s, d] = ring.ends(RingSchedule::At{0, slot});
            if (s == switch_endpoint || d == switch_endpoint) return false;
            const topo::DeviceId src = gpu_of(ranks[s]), dst = gpu_of(ranks[d]);
            route.clear();
            multipath.push_back(
                net_.router().route(src, dst, connection_key(inst.comm.value, src.value, dst.value), route) ? 1 : 0);
            pool.insert(pool.end(), route.begin(), route.end());
            offsets.push_back(pool.size());
            ends.emplace_back(src, dst);
        }
    }
    // One flow per transfer, on the route above: per-channel rings, or one ring whose transfers' channels all take
    // their one path (start_flows: a flow of all the channels' shares); channels spread over several paths are not
    // folded.
    if (!inst.plan().channels_planned && options_.channels > 1 &&
        std::any_of(multipath.begin(), multipath.end(), [](std::uint8_t m) { return m != 0; }))
        return false;
    const std::size_t link_count = cluster_.links().size();
    const auto alike = [&](topo::LinkId a, topo::LinkId b) {
        const topo::Link &x = cluster_.link(a), &y = cluster_.link(b);
        return x.kind == y.kind && x.bandwidth_bytes_per_s == y.bandwidth_bytes_per_s && x.latency == y.latency &&
               link_efficiency(x) == link_efficiency(y);
    };
    // The link map of an edge map (edge e = ring * width + slot to its image), if it is a permutation that keeps
    // what a transfer's timing reads.
    const auto link_map = [&](auto&& image_of, LinkMap& map) {
        map.image.assign(link_count, UINT32_MAX);
        map.preimage.assign(link_count, UINT32_MAX);
        for (std::size_t e = 0; e + 1 < offsets.size(); ++e) {
            const std::size_t f = image_of(e);
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
                if (map.image[a.index()] == UINT32_MAX && map.preimage[b.index()] == UINT32_MAX) {
                    map.image[a.index()] = b.value;
                    map.preimage[b.index()] = a.value;
                } else if (map.image[a.index()] != b.value || map.preimage[b.index()] != a.value) {
                    return false;
                }
            }
        }
        return true;
    };
    // rho: ring k to ring k + 1 (mod R), when there are several rings (else none: rings that are not copies of
    // one another are not folded).
    LinkMap rho, sigma;
    if (ring_count > 1 &&
        !link_map([&](std::size_t e) { return (e / width + 1) % ring_count * width + e % width; }, rho))
        return false;
    // sigma: a shift of every ring by P positions, the least P that is one (whole groups of equal pieces).
    std::uint32_t shift = n;
    const bool shiftable = first.relay == UINT32_MAX && (first.whole || first.bytes % n == 0);
    LinkMap trial;
    for (std::uint32_t p = 2; shiftable && p <= n / 2; ++p) {
        if (n % p != 0) continue;
        // Its first p positions must be members 0 .. p-1 (the folded ring's members).
        std::vector<std::uint32_t> head(first.order.begin(), first.order.begin() + p);
        std::sort(head.begin(), head.end());
        if (head.back() != p - 1 || std::adjacent_find(head.begin(), head.end()) != head.end()) continue;
        if (link_map([&](std::size_t e) { return e / width * width + (e % width + p) % n; }, trial)) {
            shift = p;
            sigma = std::move(trial);
            break;
        }
    }
    const std::size_t copies = ring_count * (n / shift);
    if (copies < 2) return false;
    // Commuting generators, and every orbit of exactly `copies` links, each represented by its lowest id.
    std::vector<std::uint8_t> used(link_count, 0);
    for (const topo::LinkId l : pool) used[l.index()] = 1;
    const auto apply = [](const LinkMap& m, std::uint32_t l) { return m.image.empty() ? l : m.image[l]; };
    for (std::size_t l = 0; l < link_count; ++l) {
        if (used[l] && apply(rho, apply(sigma, static_cast<std::uint32_t>(l))) !=
                           apply(sigma, apply(rho, static_cast<std::uint32_t>(l))))
            return false;
    }
    std::vector<topo::LinkId> alias(link_count);
    for (std::size_t l = 0; l < link_count; ++l) alias[l] = topo::LinkId::from_index(l);
    std::vector<std::uint8_t> done(link_count, 0);
    std::vector<std::uint32_t> orbit;
    const std::uint32_t shifts = n / shift;
    std::size_t orbits = 0;
    for (std::size_t l = 0; l < link_count; ++l) {
        if (!used[l] || done[l]) continue;
        orbit.clear();
        auto x = static_cast<std::uint32_t>(l);
        for (std::size_t a = 0; a < ring_count; ++a) {
            std::uint32_t y = x;
            for (std::uint32_t b = 0; b < shifts; ++b) {
                if (y == UINT32_MAX || done[y]) return false;  // (a link met twice: the orbit is smaller)
                done[y] = 1;
                orbit.push_back(y);
                y = apply(sigma, y);
            }
            if (y != x) return false;
            x = apply(rho, x);
        }
        if (x != l) return false;
        const std::uint32_t lowest = *std::min_element(orbit.begin(), orbit.end());
        for (const std::uint32_t o : orbit) alias[o] = topo::LinkId::from_index(lowest);
        ++orbits;
    }
    // The representative edges (ring 0's first `shift`) crossing each orbit at most once.
    std::vector<std::uint32_t> seen(link_count, UINT32_MAX);
    for (std::uint32_t slot = 0; slot < (shift < n ? shift : width); ++slot) {
        for (std::size_t i = offsets[slot]; i < offsets[slot + 1]; ++i) {
            const std::uint32_t rep = alias[pool[i].index()].value;
            if (seen[rep] == slot) return false;
            seen[rep] = slot;
        }
    }
    // A shift: the folded ring's last edge sends to its position 0 in place of position `shift`, on the route of
    // the edge it stands for, kept for its ends (route_once finds it; its cost and efficiency are that route's).
    RingSchedule folded_ring = first;
    if (shift < n) {
        const auto [s, real] = ends[shift - 1];  // ring 0's edge from position shift - 1 to position shift
        const topo::DeviceId fake = gpu_of(ranks[first.order[0]]);
        if (cluster_.device(fake).gpu_spec != cluster_.device(real).gpu_spec) return false;
        std::vector<topo::LinkId> wrap(pool.begin() + static_cast<std::ptrdiff_t>(offsets[shift - 1]),
                                       pool.begin() + static_cast<std::ptrdiff_t>(offsets[shift]));
        for (topo::LinkId& l : wrap) l = alias[l.index()];
        keep_route_as(s, fake, connection_key(inst.comm.value, s.value, fake.value), wrap, multipath[shift - 1] != 0,
                      cluster_.device(s).node != cluster_.device(real).node);
        folded_ring.order.resize(shift);
        folded_ring.positions = n;
        if (!first.whole) folded_ring.bytes = first.bytes / n * shift;
        shift_folded_ = true;
    }
    // The representatives alone, on the orbits' links (route_once maps every route it computes from here on).
    link_alias_ = std::move(alias);
    CollectivePlan folded;
    folded.channels_planned = inst.plan().channels_planned;
    folded.add_ring(std::move(folded_ring));
    inst.set_plan(std::move(folded));
    engine::layer_log("sim").log(options_.nested ? spdlog::level::trace : spdlog::level::debug,
                                 "{}: the call folded by symmetry: {} ring(s) as one, {} positions of {} ({} orbits "
                                 "of {} links)",
                                 g_.source, ring_count, shift, n, orbits, copies);
    return true;
}

}  // namespace clustersim::sim
