// A collective's transfer started on the network: one flow per channel path (ECMP spreads a transfer's channels),
// NCCL's protocol costs (wire format, per-hop and base latencies, link efficiency, the receiver's reduction), and
// single-path routes kept by (source, destination) with their efficiency.
#include <algorithm>
#include <cmath>

#include "engine/error.h"
#include "engine/hash.h"
#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

using engine::Time;

// (Inlined where start_flows calls it, once per flow: the memo's check is a few compares, the call's eleven arguments
// cost more.)
[[gnu::always_inline]] inline FlowCost ReplayEngine::memo_cost(CostMemo& memo, const Instance& inst,
                                                               const PlannedTransfer& x, std::uint64_t bytes,
                                                               std::uint64_t channel_bytes, bool first_of_call,
                                                               topo::DeviceId src, topo::DeviceId dst,
                                                               std::span<const topo::LinkId> route,
                                                               const CachedRoute& kept) {
    // protocol_cost reads, besides the route's kept facts, only these (the route fixes its ends and their GPUs).
    const CostMemo::Key key{bytes,         channel_bytes, inst.algorithm, inst.protocol, inst.modelled_protocol,
                            first_of_call, x.reduces};
    if (!(memo.key == key)) {
        memo.cost = protocol_cost(inst, x, bytes, channel_bytes, first_of_call, src, dst, route, &kept);
        memo.key = key;
    }
    return memo.cost;
}

void ReplayEngine::start_flows(std::uint32_t index, std::uint64_t t, const PlannedTransfer& x, bool first_of_call,
                               Time& ideal, SlotRoute* slot_route) {
    Instance& inst = instances_[index];
    const auto& ranks = g_.comms[inst.comm.index()].ranks;
    if (inst.first_start.count() < 0) inst.first_start = sim_.now();
    for (const std::uint32_t m : {x.src, x.dst}) {
        if (m != switch_endpoint && inst.member_active[m]++ == 0) inst.member_busy_since[m] = sim_.now();
    }
    // One flow per channel, with consecutive flow keys from a hashed base, so that ECMP spreads the channels of a
    // transfer over the equal-cost paths. Channels that land on the same path travel as one flow of that many
    // shares (same contention, fewer events). The first channels take the remainder bytes.
    const std::uint32_t channels =
        x.bytes == 0 || inst.plan().channels_planned ? 1 : std::max<std::uint32_t>(1, options_.channels);
    const topo::DeviceId src = x.src == switch_endpoint ? node_switch(gpu_of(ranks[x.dst])) : gpu_of(ranks[x.src]);
    const topo::DeviceId dst = x.dst == switch_endpoint ? node_switch(gpu_of(ranks[x.src])) : gpu_of(ranks[x.dst]);
    const std::uint64_t pair = (std::uint64_t{src.value} << 32) | dst.value;
    if (slot_serves(slot_route, pair)) {
        // A ring slot's kept route (no choice of paths): one flow of all the channels' shares on it, with the cost
        // its last transfers had. The same flow, in the same order, as the general path below would start.
        const CachedRoute& kept = kept_routes_[slot_route->kept];
        CLUSTERSIM_CHECK(!kept.multipath, "a ring slot kept a route with a choice of paths");
        const std::span<const topo::LinkId> route(route_pool_.data() + kept.offset, kept.length);
        const std::uint32_t slot = live_slot(index, t);
        const FlowCost cost = memo_cost(slot_route->memo, inst, x, x.bytes, share_of(x.bytes, channels, 0),
                                        first_of_call, src, dst, route, kept);
        const FlowId f = net_.start_flow_on_route(src, dst, route, cost.bytes, (owner_collective << owner_shift) | slot,
                                                  channels, cost.extra, &kept.cost, inst.tap);
        ideal = std::max(ideal, net_.ideal_duration(f));
        live_transfers_[slot].flows_unsent = live_transfers_[slot].flows_left = 1;
        return;
    }
    // ECMP by connection: NCCL sets up a channel's connection to a peer once per communicator, and its path stays
    // (InfiniBand routes by destination, RoCE hashes the queue pair's fixed 5-tuple), so the key is the
    // communicator and the two ends, not the transfer.
    const std::uint64_t key = connection_key(inst.comm.value, src.value, dst.value);
    channel_routes_.resize(channels);
    channel_kept_.resize(channels);
    const auto kept_index = [&](const RouteView& v) {
        return v.kept ? static_cast<std::uint32_t>(v.kept - kept_routes_.data()) : UINT32_MAX;
    };
    // A kept plan's transfer: the route its first channel took on an earlier call, if that entry still is it.
    CachedPlan::RouteHint* hint = inst.route_hints && !slot_route ? &inst.route_hints[t] : nullptr;
    RouteView first;
    if (hint && hint->epoch == routes_epoch_ && hint_serves(hint->kept, pair, key)) {
        const CachedRoute& c = kept_routes_[hint->kept];
        first = {{route_pool_.data() + c.offset, c.length}, c.multipath, &c};
    } else {
        first = route_once(src, dst, key, channel_routes_[0], slot_route);
        if (hint && first.kept) *hint = {static_cast<std::uint32_t>(first.kept - kept_routes_.data()), routes_epoch_};
    }
    const bool multipath = first.multipath;
    // Without a choice of paths every channel takes the first one's: one flow of all the channels' shares.
    const std::uint32_t routed = multipath ? channels : 1;
    const std::uint32_t kept0 = kept_index(first);
    channel_kept_[0] = kept0;
    // A connection whose channels were found side by side before: each channel's entry, and the channel it merges
    // into, as found then (kept entries do not change while kept).
    const bool merges_known = multipath && kept0 != UINT32_MAX && kept_routes_[kept0].merged_channels == channels;
    // A connection's channels are kept side by side (routed one after the other on its first transfer): channel c
    // is the entry c places after channel 0's when that entry is its (same ends, key + c), found without a lookup.
    bool side_by_side = kept0 != UINT32_MAX;
    for (std::uint32_t c = 1; c < routed; ++c) {
        const std::uint32_t next = kept0 == UINT32_MAX ? UINT32_MAX : kept0 + c;
        if (merges_known || kept_for(next, pair, key + c)) {
            channel_kept_[c] = next;
            continue;
        }
        channel_kept_[c] = kept_index(route_once(src, dst, key + c, channel_routes_[c]));
        side_by_side = false;
    }
    // Each channel's route (read after every channel is routed: keeping a route may move the kept ones), and the
    // first channel on the same path, into which it merges: routes compared link by link only where hashes agree.
    channel_paths_.resize(routed);
    for (std::uint32_t c = 0; c < routed; ++c) {
        ChannelPath& p = channel_paths_[c];
        const std::uint32_t kept = channel_kept_[c];
        p.route = kept == UINT32_MAX ? std::span<const topo::LinkId>(channel_routes_[c])
                                     : std::span<const topo::LinkId>(route_pool_.data() + kept_routes_[kept].offset,
                                                                     kept_routes_[kept].length);
        if (merges_known) {
            p.first = static_cast<std::uint32_t>(kept_routes_[kept0].channel_firsts >> (4 * c)) & 15;
        } else {
            // (A kept route's hash is kept with it: its links are not read here.)
            p.hash = kept == UINT32_MAX ? route_hash(p.route) : kept_routes_[kept].hash;
            p.first = c;
            for (std::uint32_t e = 0; e < c && p.first == c; ++e) {
                const ChannelPath& q = channel_paths_[e];
                if (q.first == e && q.hash == p.hash && std::ranges::equal(q.route, p.route)) p.first = e;
            }
        }
        // Without a choice of paths the one flow carries every channel's share.
        p.bytes = multipath ? 0 : x.bytes;
        p.weight = multipath ? 0 : channels;
        if (multipath) {
            channel_paths_[p.first].bytes += share_of(x.bytes, channels, c);
            ++channel_paths_[p.first].weight;
        }
    }
    if (multipath && !merges_known && side_by_side && channels <= CachedRoute::most_merged_channels) {
        std::uint32_t firsts = 0;
        for (std::uint32_t c = 0; c < routed; ++c) firsts |= channel_paths_[c].first << (4 * c);
        kept_routes_[kept0].channel_firsts = firsts;
        kept_routes_[kept0].merged_channels = static_cast<std::uint8_t>(channels);
    }
    const std::uint32_t slot = live_slot(index, t);
    std::uint32_t flows = 0;
    for (std::uint32_t c = 0; c < routed; ++c) {
        const ChannelPath& p = channel_paths_[c];
        if (p.first != c) continue;  // merged into an earlier channel's flow
        // The kept route's entry holds its cost and endpoints (the first channel's, when there is no choice).
        const CachedRoute* kept = channel_kept_[c] == UINT32_MAX ? nullptr : &kept_routes_[channel_kept_[c]];
        const std::uint64_t channel_bytes = share_of(x.bytes, channels, c);
        // A ring slot serves here only if route_once has just kept its route (a serving slot took the path above),
        // which has one path, so this is its single flow: its cost is kept with it for the next steps.
        SlotRoute* same = slot_serves(slot_route, pair) ? slot_route : nullptr;
        CLUSTERSIM_CHECK(!same || (routed == 1 && same->kept == channel_kept_[0]),
                         "a ring slot kept a route other than its transfer's");
        // (A kept route's cost is remembered with it, a slot's with the slot: the same numbers, looked up.)
        const FlowCost cost =
            same   ? memo_cost(same->memo, inst, x, p.bytes, channel_bytes, first_of_call, src, dst, p.route, *kept)
            : kept ? memo_cost(kept_routes_[channel_kept_[c]].memo, inst, x, p.bytes, channel_bytes, first_of_call, src,
                               dst, p.route, *kept)
                   : protocol_cost(inst, x, p.bytes, channel_bytes, first_of_call, src, dst, p.route, nullptr);
        const FlowId f =
            net_.start_flow_on_route(src, dst, p.route, cost.bytes, (owner_collective << owner_shift) | slot, p.weight,
                                     cost.extra, kept ? &kept->cost : nullptr, inst.tap);
        ideal = std::max(ideal, net_.ideal_duration(f));
        ++flows;
    }
    live_transfers_[slot].flows_unsent = live_transfers_[slot].flows_left = flows;
}

std::uint32_t ReplayEngine::live_slot(std::uint32_t index, std::uint64_t t) {
    std::uint32_t slot;
    if (!free_live_.empty()) {
        slot = free_live_.back();
        free_live_.pop_back();
        live_transfers_[slot] = {index, 0, t, 0};
    } else {
        slot = static_cast<std::uint32_t>(live_transfers_.size());
        live_transfers_.push_back({index, 0, t, 0});
        CLUSTERSIM_CHECK(slot < (1U << owner_shift), "too many transfers in flight");
    }
    return slot;
}

FlowCost ReplayEngine::protocol_cost(const Instance& inst, const PlannedTransfer& x, std::uint64_t bytes,
                                     std::uint64_t channel_bytes, bool first_of_call, topo::DeviceId src,
                                     topo::DeviceId dst, std::span<const topo::LinkId> route,
                                     const CachedRoute* kept) const {
    if (!inst.modelled_protocol) return {bytes, Time{0}};
    // The protocol's line format inflates the bytes; its per-hop latency (and, for the first transfers, the call's
    // base latency) delays the arrival. It also reaches only a fraction of the bottleneck link's raw bandwidth
    // (nccl_link_efficiency).
    const double efficiency = kept ? kept->efficiency : route_efficiency(route);
    bytes = static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(bytes) * nccl_wire_factor(inst.protocol) / efficiency));
    const bool network = kept ? kept->between_nodes : cluster_.device(src).node != cluster_.device(dst).node;
    const bool nvlink =
        kept ? kept->nvlink_first : !route.empty() && cluster_.link(route.front()).kind == topo::LinkKind::nvlink;
    const NcclAlgorithm family = inst.algorithm == tree_algorithm_   ? NcclAlgorithm::tree
                                 : inst.algorithm == nvls_algorithm_ ? NcclAlgorithm::nvls
                                                                     : NcclAlgorithm::ring;
    if (family == NcclAlgorithm::nvls)
        bytes = static_cast<std::uint64_t>(std::ceil(static_cast<double>(bytes) / nccl_nvls_efficiency()));
    double us = nccl_hop_latency_us(network, nvlink, family, inst.protocol);
    if (first_of_call) us += nccl_base_latency_us(family, inst.protocol);
    if (x.reduces && x.dst != switch_endpoint) {
        // The receiver reduces as data arrives (NCCL's recvReduceSend/recvReduceCopy: read the received slice and
        // its own data, write the sum: 3 bytes of HBM traffic per byte); a slice is reduced while the next one
        // arrives, so only the last protocol step's reduction is not hidden.
        const double slice =
            static_cast<double>(std::min<std::uint64_t>(channel_bytes, nccl_step_bytes(inst.protocol)));
        us += 3.0 * slice / cluster_.gpu_spec(dst).hbm_bandwidth_bytes_per_s * 1e6;
    }
    return {bytes, engine::from_seconds(us * 1e-6)};
}

ReplayEngine::RouteView ReplayEngine::route_once(topo::DeviceId src, topo::DeviceId dst, std::uint64_t key,
                                                 std::vector<topo::LinkId>& out, SlotRoute* slot_route) {
    // A route without a choice of paths does not depend on the key: the transfers of a collective repeat the same
    // (source, destination) pairs step after step, so such routes are kept (until a link's state changes), with
    // their NCCL efficiency. A route with a choice depends on the key too; keys are per connection, so these repeat
    // as well and are kept by (source, destination, key), the entry checked against all three.
    const std::uint64_t pair = (std::uint64_t{src.value} << 32) | dst.value;
    const auto view = [&](std::uint32_t kept) -> RouteView {
        const CachedRoute& c = kept_routes_[kept];
        return {{route_pool_.data() + c.offset, c.length}, c.multipath, &c};
    };
    // A ring slot's edge: the route it took last, without a hash lookup.
    if (slot_serves(slot_route, pair)) return view(slot_route->kept);
    if (const std::uint32_t* kept = single_routes_.find(pair)) {
        if (slot_route) *slot_route = {pair, *kept, routes_epoch_};
        return view(*kept);
    }
    if (const std::uint32_t* kept = keyed_routes_.find(keyed_route(pair, key)); kept && kept_for(*kept, pair, key))
        return view(*kept);
    out.clear();
    const bool multipath = net_.router().route(src, dst, key, out);
    if (!link_alias_.empty()) {
        for (topo::LinkId& l : out) l = link_alias_[l.index()];
    }
    if (kept_routes_.size() >= max_cached_routes) return {out, multipath, nullptr};
    const std::uint32_t kept =
        keep_route_as(src, dst, key, out, multipath, cluster_.device(src).node != cluster_.device(dst).node);
    if (slot_route && !multipath) *slot_route = {pair, kept, routes_epoch_};
    return view(kept);
}

std::uint32_t ReplayEngine::keep_route_as(topo::DeviceId src, topo::DeviceId dst, std::uint64_t key,
                                          std::span<const topo::LinkId> links, bool multipath, bool between_nodes) {
    const std::uint64_t pair = (std::uint64_t{src.value} << 32) | dst.value;
    bool inserted = false;
    const auto kept = static_cast<std::uint32_t>(kept_routes_.size());
    (multipath ? keyed_routes_.find_or_insert(keyed_route(pair, key), inserted)
               : single_routes_.find_or_insert(pair, inserted)) = kept;
    kept_routes_.push_back(
        {.pair = pair,
         .key = multipath ? key : 0,
         .offset = static_cast<std::uint32_t>(route_pool_.size()),
         .length = static_cast<std::uint32_t>(links.size()),
         .hash = route_hash(links),
         .cost = net_.route_cost(links),
         .multipath = multipath,
         .between_nodes = between_nodes,
         .nvlink_first = !links.empty() && cluster_.link(links.front()).kind == topo::LinkKind::nvlink,
         .efficiency = route_efficiency(links)});
    route_pool_.insert(route_pool_.end(), links.begin(), links.end());
    return kept;
}

double ReplayEngine::route_efficiency(std::span<const topo::LinkId> route) const {
    // The efficiency of the route's bottleneck link (the slowest; the first of equal ones).
    double slowest = INFINITY, efficiency = 1.0;
    for (const topo::LinkId l : route) {
        const topo::Link& link = cluster_.link(l);
        if (link.bandwidth_bytes_per_s < slowest) {
            slowest = link.bandwidth_bytes_per_s;
            efficiency = link_efficiency(link);
        }
    }
    return efficiency;
}

double ReplayEngine::link_efficiency(const topo::Link& link) const {
    if (link.kind != topo::LinkKind::nvlink) return options_.nccl_link_efficiency[static_cast<std::size_t>(link.kind)];
    // NVLink: the architecture's, from the GPU at either end (the first GPU's for a link between two switches).
    for (const topo::DeviceId d : {link.src, link.dst}) {
        if (cluster_.device(d).gpu_spec >= 0) return nvlink_efficiency(d);
    }
    return nvlink_efficiency(cluster_.gpus().front());
}

double ReplayEngine::nvlink_efficiency(topo::DeviceId gpu) const {
    const double forced = options_.nccl_link_efficiency[static_cast<std::size_t>(topo::LinkKind::nvlink)];
    return forced > 0 ? forced : cluster_.gpu_spec(gpu).nvlink_efficiency;
}

}  // namespace clustersim::sim
