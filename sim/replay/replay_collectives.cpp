// Collectives in the replay: a call's plan (NCCL's choice of algorithm and protocol), its transfers started as
// their ends arrive and their dependencies complete, protocol latencies and link efficiency, and each member's
// wait, busy time and contention.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/hash.h"
#include "engine/units.h"
#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

using engine::Time;
using traces::OpId;
using traces::OpKind;

void ReplayEngine::arrive_collective(OpId id) {
    const traces::Op& op = g_.ops[id.index()];
    const traces::RankId rank = rank_of(op);
    set_comm_active(rank, +1);  // the NCCL kernel is resident (and spinning) from its launch
    const std::uint32_t index = instance_of(partner(id));
    if (modelled(g_.comms[instances_[index].comm.index()]) || traced_only(id)) {
        arrive_modelled(id);
        return;
    }
    Instance& inst = instances_[index];
    if (!inst.planned) plan_instance(index, op);
    const std::uint32_t member = member_of(rank, op.comm());
    inst.members[member] = id;
    inst.member_arrival[member] = sim_.now();
    note_arrival_trigger(inst, member, trigger(id));
    if (inst.first_arrival.count() < 0) inst.first_arrival = sim_.now();
    inst.last_arrival = sim_.now();
    ++inst.arrived;
    if (inst.member_left[member] == 0) {  // nothing to send or receive (a one-member communicator)
        start_slot(id) = sim_.now();      // (its trigger is its critical predecessor)
        done_queue_.push_back(id);
        if (inst.transfers_left == 0 && inst.arrived == inst.members.size()) {
            inst.end = std::max(inst.end, sim_.now());  // (a call without transfers ends as its last member enters)
            release_instance(index);
        }
        return;
    }
    // Transfers that waited only for this member's arrival can start now, in plan order.
    if (inst.repeat != UINT32_MAX) {  // (timed from a record once every member is in)
        repeat_member_arrived(index, member);
        return;
    }
    if (inst.closed_form) {
        closed_member_arrived(index, member);
        return;
    }
    member_arrived_as_flows(index, member);
}

void ReplayEngine::member_arrived_as_flows(std::uint32_t index, std::uint32_t member) {
    Instance& inst = instances_[index];
    if (inst.plan().scheduled()) {
        scheduled_member_arrived(index, member);
        return;
    }
    for (std::uint32_t k = inst.member_offsets[member]; k < inst.member_offsets[member + 1]; ++k) {
        const std::uint32_t t = inst.member_transfers[k];
        if (--inst.pending[t] == 0) start_transfer(index, t);
    }
}

void ReplayEngine::plan_instance(std::uint32_t index, const traces::Op& op) {
    Instance& inst = instances_[index];
    const auto& ranks = g_.comms[inst.comm.index()].ranks;
    CommSetup& setup = comm_setup(inst.comm);
    // The algorithm: forced by the run, else hinted by the op, else NCCL's choice (or the kind's default).
    // Precedence: the run's forced algorithm (a what-if), then the communicator's, then the op's hint.
    std::optional<std::size_t> algorithm = options_.algorithm;
    const std::string& comm_name = g_.comms[inst.comm.index()].name;
    for (const auto& [name, chosen] : options_.communicator_algorithms) {
        if (!algorithm && name == comm_name) algorithm = chosen;
    }
    if (!algorithm && op.algorithm() != traces::no_algorithm)
        algorithm = find_collective_algorithm(g_.names[op.algorithm()]);
    const std::size_t tree = tree_algorithm_, ring = ring_algorithm_;
    if (options_.protocols && op.collective != traces::CollectiveKind::all_to_all) {
        if (!setup.has_info) {
            gpu_scratch_.clear();
            for (const traces::RankId r : ranks) gpu_scratch_.push_back(gpu_of(r));
            setup.info = nccl_info(gpu_scratch_);
            setup.has_info = true;
        }
        NcclTopologyInfo info = setup.info;
        info.nvls = setup.switch_reduction;
        // Rings per NIC on mesh nodes: NCCL crosses nodes through that many NICs.
        if (setup.channel_rings.size() > 1) info.inter_bw_gbps *= static_cast<double>(setup.channel_rings.size());
        std::optional<NcclAlgorithm> nccl_algorithm;
        // On fabrics of direct GPU-to-GPU cables (GPUs that relay: the ring and torus presets) NCCL's graph search
        // finds rings along the cables; a tree's edges would span many hops, so the tuner chooses among rings.
        if (!algorithm && setup.cabled) nccl_algorithm = NcclAlgorithm::ring;
        if (algorithm == tree) {
            nccl_algorithm = NcclAlgorithm::tree;
        } else if (algorithm == nvls_algorithm_) {
            nccl_algorithm = NcclAlgorithm::nvls;
        } else if (algorithm) {
            nccl_algorithm = NcclAlgorithm::ring;
        }
        const NcclEstimate choice = nccl_choose(op.collective, nccl_bytes(op.collective, op.bytes(), info.ranks), info,
                                                nccl_algorithm, options_.protocol);
        if (!algorithm) {
            algorithm = choice.algorithm == NcclAlgorithm::tree   ? tree
                        : choice.algorithm == NcclAlgorithm::nvls ? nvls_algorithm_
                                                                  : ring;
        }
        inst.protocol = choice.protocol;
        inst.predicted_us = choice.time_us;
        inst.modelled_protocol = true;
    } else if (options_.protocols) {
        // All-to-all is NCCL's grouped send/receive, outside its tuner: point-to-point runs the Simple protocol
        // (its LL paths serve only tiny messages), so each transfer pays Simple's base latency (once, as the first
        // transfers start together) and the per-hop latency of its hop kind, at the link's NCCL efficiency.
        inst.protocol = options_.protocol.value_or(NcclProtocol::simple);
        inst.modelled_protocol = true;
    }
    const std::uint32_t chunks =
        pipeline_chunks(op.bytes(), inst.modelled_protocol ? inst.protocol : NcclProtocol::simple,
                        static_cast<std::uint32_t>(ranks.size()));
    inst.algorithm = algorithm.value_or(default_algorithm(op.collective));
    // A plan this call repeats (members of one size only: the key holds one) is read where it is kept, not copied
    // (a copy of a tensor-parallel call's 8 rings was 1.5% of the LLaMA plan's samples at 16,384 GPUs); a listed one
    // comes with its arrays, copied (the executor counts down in them).
    const PlanKey key{inst.comm.value, op.collective, op.bytes(), chunks, inst.algorithm};
    const bool cacheable = calls_[inst.call].member_bytes.empty();
    CachedPlan* cached = cacheable ? plan_cache_.find(key) : nullptr;
    const PlanCache::Schedule* kept_schedule = cacheable && !cached ? plan_cache_.find_schedule(key) : nullptr;
    inst.route_hints = cached ? cached->route_hints.data() : nullptr;
    if (cached || kept_schedule) {
        inst.use_kept_plan(cached ? cached->plan : kept_schedule->plan);
        inst.algorithm = cached ? cached->algorithm : kept_schedule->algorithm;
    } else {
        // Every field set for this call; the vectors are assigned into the kept request's, whose capacity stays
        // from call to call.
        PlanRequest& request = plan_request_;
        request.kind = op.collective;
        request.members = static_cast<std::uint32_t>(ranks.size());
        request.bytes = op.bytes();
        request.chunks = chunks;
        request.member_bytes = calls_[inst.call].member_bytes;
        request.node_of = setup.node_of;
        request.switch_reduction = setup.switch_reduction;
        request.ring_order = setup.ring_order;
        request.channels = std::max<std::uint32_t>(1, options_.channels);
        request.switched_nodes = setup.switched_nodes;
        request.channel_rings = setup.channel_rings;
        try {
            inst.set_plan(plan_collective(inst.algorithm, request, &inst.algorithm));
        } catch (const engine::InputError& e) {  // a plan past the memory budget: name the call
            throw engine::InputError(
                engine::SourceLocation{g_.source},
                fmt::format("rank {} {} on '{}' of {}: {}", rank_of(op).value,
                            traces::collective_kind_name(op.collective), g_.comms[inst.comm.index()].name,
                            engine::format_bytes(static_cast<double>(op.bytes())), e.message()));
        }
        if (cacheable && inst.plan().scheduled()) plan_cache_.keep_schedule(key, {inst.plan(), inst.algorithm});
    }
    inst.planned = true;
    const bool listed = !inst.plan().scheduled();  // (kept only so: a schedule may be folded or expanded below)
    // A symmetric ring call alone: one group of one ring, on links standing for their orbits.
    if (inst.plan().scheduled()) fold_by_symmetry(index);
    // The reference form of ring schedules: every transfer listed, as other algorithms' (the same run).
    if (inst.plan().scheduled() && !options_.ring_schedules) inst.set_plan(inst.plan().expanded());
    const std::size_t members = ranks.size();
    inst.transfers_left = inst.plan().size();
    inst.member_left.assign(members, 0);
    inst.member_active.assign(members, 0);
    inst.member_busy_since.assign(members, Time{0});
    inst.member_busy.assign(members, Time{0});
    inst.member_arrival.assign(members, Time{0});
    inst.member_ideal.assign(members, Time{0});
    if (inst.plan().scheduled()) {
        inst.ring_states.reset(inst.plan().slots());
        inst.slot_routes.assign(inst.plan().slots(), SlotRoute{});
        for (const RingSchedule& schedule : inst.plan().rings()) {
            for (std::uint32_t m = 0; m < members; ++m)
                inst.member_left[m] += static_cast<std::uint32_t>(schedule.member_transfers(m));
        }
        if (!try_closed_form(index, op, chunks)) plan_repeat(index, op, chunks);
        return;
    }
    const auto transfers = static_cast<std::size_t>(inst.plan().size());
    inst.ideal_done.assign(transfers, Time{0});
    // The executor's arrays built from a listed plan, as a kept plan holds them too (the same names).
    const auto plan_arrays = [](auto& s) {
        return std::tie(s.pending, s.fifo_next, s.dependent_offsets, s.dependents, s.member_offsets, s.member_transfers,
                        s.member_left);
    };
    if (cached) {
        plan_arrays(inst) = plan_arrays(*cached);
        if (!try_closed_form(index, op, chunks)) plan_repeat(index, op, chunks);
        return;
    }
    inst.pending.assign(transfers, 0);
    inst.fifo_next.assign(transfers, no_transfer);
    inst.dependent_offsets.assign(transfers + 1, 0);
    inst.member_offsets.assign(members + 1, 0);
    for (std::uint32_t t = 0; t < transfers; ++t) {
        const PlannedTransfer& x = inst.plan().transfers()[t];
        // Dependencies, the FIFO predecessor's send, and the arrival of each endpoint that is a member.
        inst.pending[t] =
            static_cast<std::uint32_t>(inst.plan().after(t).size()) + (x.after_sent != no_transfer ? 1 : 0);
        if (x.after_sent != no_transfer) inst.fifo_next[x.after_sent] = t;
        for (const std::uint32_t a : inst.plan().after(t)) ++inst.dependent_offsets[a + 1];
        for (const std::uint32_t m : {x.src, x.dst}) {
            if (m == switch_endpoint) continue;
            ++inst.pending[t];
            ++inst.member_offsets[m + 1];
            ++inst.member_left[m];
        }
    }
    for (std::size_t t = 0; t < transfers; ++t) inst.dependent_offsets[t + 1] += inst.dependent_offsets[t];
    for (std::size_t m = 0; m < members; ++m) inst.member_offsets[m + 1] += inst.member_offsets[m];
    inst.dependents.resize(inst.dependent_offsets[transfers]);
    inst.member_transfers.resize(inst.member_offsets[members]);
    std::vector<std::uint32_t> fill_dep(inst.dependent_offsets.begin(), inst.dependent_offsets.end() - 1);
    std::vector<std::uint32_t> fill_member(inst.member_offsets.begin(), inst.member_offsets.end() - 1);
    for (std::uint32_t t = 0; t < transfers; ++t) {
        const PlannedTransfer& x = inst.plan().transfers()[t];
        for (const std::uint32_t a : inst.plan().after(t)) inst.dependents[fill_dep[a]++] = t;
        for (const std::uint32_t m : {x.src, x.dst}) {
            if (m != switch_endpoint) inst.member_transfers[fill_member[m]++] = t;
        }
    }
    if (cacheable && listed) {
        CachedPlan plan{inst.plan(), inst.algorithm};
        plan_arrays(plan) = plan_arrays(inst);
        CachedPlan* kept = plan_cache_.keep(key, std::move(plan));
        inst.route_hints = kept ? kept->route_hints.data() : nullptr;
    }
    if (!try_closed_form(index, op, chunks)) plan_repeat(index, op, chunks);
}

std::uint32_t ReplayEngine::pipeline_chunks(std::uint64_t bytes, NcclProtocol protocol, std::uint32_t members) const {
    // Trees, chains and NVLS pipeline a call in chunks: NCCL moves one protocol step per channel at a time.
    const std::uint64_t channels = std::max<std::uint32_t>(1, options_.channels);
    if (options_.tree_chunks == 0) {
        const std::uint64_t step = channels * nccl_step_bytes(protocol);
        // At most max_auto_chunks, and at most max_auto_pieces over all members and channels (speed).
        const std::uint64_t cap =
            std::clamp<std::uint64_t>(ReplayOptions::max_auto_pieces / (channels * std::max<std::uint32_t>(1, members)),
                                      8, ReplayOptions::max_auto_chunks);
        return static_cast<std::uint32_t>(std::clamp<std::uint64_t>((bytes + step - 1) / step, 1, cap));
    }
    return static_cast<std::uint32_t>(std::clamp<std::uint64_t>((bytes + 65535) / 65536, 1, options_.tree_chunks));
}

ReplayEngine::CommSetup& ReplayEngine::comm_setup(traces::CommId comm) {
    if (comm_setups_.size() < g_.comms.size()) comm_setups_.resize(g_.comms.size());
    CommSetup& setup = comm_setups_[comm.index()];
    if (setup.ready) return setup;
    setup.ready = true;
    const auto& ranks = g_.comms[comm.index()].ranks;
    for (const traces::RankId r : ranks)
        setup.node_of.push_back(static_cast<std::uint32_t>(cluster_.device(gpu_of(r)).node));
    setup.one_node = std::all_of(setup.node_of.begin(), setup.node_of.end(),
                                 [&](std::uint32_t n) { return n == setup.node_of.front(); });
    const topo::GpuSpec& gpu = cluster_.gpu_spec(gpu_of(ranks.front()));
    setup.switch_reduction =
        setup.one_node && node_switch(gpu_of(ranks.front())).valid() && gpu.name.rfind("H", 0) == 0;
    setup.switched_nodes =
        std::all_of(ranks.begin(), ranks.end(), [&](traces::RankId r) { return node_switch(gpu_of(r)).valid(); });
    setup.cabled =
        std::any_of(ranks.begin(), ranks.end(), [&](traces::RankId r) { return cluster_.device(gpu_of(r)).relays; });
    setup.ring_order = find_ring_order(comm);
    if (!setup.switched_nodes && !setup.one_node) setup.channel_rings = find_mesh_rings(comm);
    return setup;
}

std::vector<std::uint32_t> ReplayEngine::find_ring_order(traces::CommId comm) {
    // Like NCCL's ring search, in a greedy form: from member 0, always go on to the unvisited member with the
    // widest path (bottleneck bandwidth), then the lowest latency, then the lowest index. On a switch every
    // order is equal and member order stays; on a DGX-1's cube-mesh it finds the all-NVLink ring. Computed once
    // per communicator, and only up to 64 members (larger ones keep member order: empty).
    std::vector<std::uint32_t> order;
    const auto& ranks = g_.comms[comm.index()].ranks;
    if (ranks.size() > 64 || ranks.size() < 3) return order;
    std::vector<std::uint8_t> used(ranks.size(), 0);
    std::uint32_t at = 0;
    used[0] = 1;
    order.push_back(0);
    for (std::size_t step = 1; step < ranks.size(); ++step) {
        std::uint32_t best = UINT32_MAX;
        double best_bw = -1;
        engine::Time best_latency = engine::max_time;
        for (std::uint32_t m = 0; m < ranks.size(); ++m) {
            if (used[m]) continue;
            route_scratch_.clear();
            net_.router().route(gpu_of(ranks[at]), gpu_of(ranks[m]), 0, route_scratch_);
            double bw = INFINITY;
            engine::Time latency{0};
            for (const topo::LinkId l : route_scratch_) {
                bw = std::min(bw, cluster_.link(l).bandwidth_bytes_per_s);
                latency += cluster_.link(l).latency;
            }
            if (bw > best_bw || (bw == best_bw && latency < best_latency)) {
                best = m;
                best_bw = bw;
                best_latency = latency;
            }
        }
        used[best] = 1;
        order.push_back(best);
        at = best;
    }
    return order;
}

topo::DeviceId ReplayEngine::node_switch(topo::DeviceId gpu) {
    // The NVSwitch a GPU is cabled to, if any (cached per GPU).
    const auto it = std::lower_bound(switch_of_.begin(), switch_of_.end(), gpu,
                                     [](const auto& entry, topo::DeviceId g) { return entry.first < g; });
    if (it != switch_of_.end() && it->first == gpu) return it->second;
    topo::DeviceId found;
    for (const topo::LinkId l : cluster_.out_links(gpu)) {
        if (cluster_.device(cluster_.link(l).dst).kind == topo::DeviceKind::nvswitch) found = cluster_.link(l).dst;
    }
    switch_of_.insert(it, {gpu, found});
    return found;
}

NcclTopologyInfo ReplayEngine::nccl_info(std::span<const topo::DeviceId> gpus) {
    NcclTopologyInfo info;
    info.ranks = static_cast<std::uint32_t>(gpus.size());
    std::vector<std::int32_t> nodes;
    for (const topo::DeviceId gpu : gpus) nodes.push_back(cluster_.device(gpu).node);
    std::sort(nodes.begin(), nodes.end());
    info.nodes = static_cast<std::uint32_t>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
    const topo::DeviceId first = gpus.front();
    const topo::GpuSpec& spec = cluster_.gpu_spec(first);
    info.arch = spec.name.rfind("V100", 0) == 0 ? GpuArch::volta
                : spec.name.rfind("H", 0) == 0  ? GpuArch::hopper
                                                : GpuArch::ampere;
    info.nvlink = false;
    for (const topo::LinkId l : cluster_.out_links(first))
        info.nvlink = info.nvlink || cluster_.link(l).kind == topo::LinkKind::nvlink;
    info.channels = std::max<std::uint32_t>(1, options_.channels);
    // Bus bandwidths: the GPU's NVLink bandwidth inside a node (its fastest link without NVLink), and the
    // bottleneck of the path to a member on another node across nodes.
    // NVLink bandwidth from the topology (the GPU's NVLink links together), not the catalogue: an H800 node or a
    // what-if NVLink speed gets its own prediction.
    double fastest = 0, nvlink = 0;
    for (const topo::LinkId l : cluster_.out_links(first)) {
        fastest = std::max(fastest, cluster_.link(l).bandwidth_bytes_per_s);
        if (cluster_.link(l).kind == topo::LinkKind::nvlink) nvlink += cluster_.link(l).bandwidth_bytes_per_s;
    }
    info.intra_bw_gbps = (info.nvlink ? nvlink : fastest) / 1e9;
    info.inter_bw_gbps = info.intra_bw_gbps;
    for (const topo::DeviceId other : gpus) {
        if (cluster_.device(other).node == cluster_.device(first).node) continue;
        // On switched nodes each channel's ring crosses nodes through its own GPU and NIC (ring.cpp): up to one
        // per GPU of a node.
        std::uint32_t per_node = 0;
        for (const topo::DeviceId q : gpus) per_node += cluster_.device(q).node == cluster_.device(first).node;
        const std::uint32_t nics = node_switch(first).valid() ? std::min(info.channels, per_node) : 1;
        info.inter_bw_gbps = route_bottleneck(first, other) * nics / 1e9;
        break;
    }
    return info;
}

double ReplayEngine::route_bottleneck(topo::DeviceId from, topo::DeviceId to) {
    route_scratch_.clear();
    net_.router().route(from, to, 0, route_scratch_);
    double bottleneck = INFINITY;
    for (const topo::LinkId l : route_scratch_)
        bottleneck = std::min(bottleneck, cluster_.link(l).bandwidth_bytes_per_s);
    return bottleneck;
}

void ReplayEngine::start_transfer(std::uint32_t index, std::uint64_t t) {
    Instance& inst = instances_[index];
    // Listed plans only: a schedule's transfers start from scheduled_condition_met (replay_rings.cpp).
    CLUSTERSIM_CHECK(!inst.plan().scheduled(), "listed-plan start of scheduled transfer {}", t);
    const PlannedTransfer& x = inst.plan().transfers()[t];
    Time ideal{0};
    start_flows(index, t, x, inst.plan().after(t).empty(), ideal);
    // When it would end on an empty network: after its dependencies would have, and not before both ends had
    // arrived (a late member is a wait, not contention). Times relative to the call's first transfer.
    Time ready_ideal{0};
    for (const std::uint32_t a : inst.plan().after(t)) ready_ideal = std::max(ready_ideal, inst.ideal_done[a]);
    if (x.after_sent != no_transfer) ready_ideal = std::max(ready_ideal, inst.ideal_done[x.after_sent]);
    inst.ideal_done[t] = ideal_end(inst, x, ready_ideal, ideal);
}

Time ReplayEngine::ideal_end(Instance& inst, const PlannedTransfer& x, Time ready_ideal, Time ideal) {
    for (const std::uint32_t m : {x.src, x.dst}) {
        if (m != switch_endpoint) ready_ideal = std::max(ready_ideal, inst.member_arrival[m] - inst.first_start);
    }
    const Time done = ready_ideal + ideal;
    inst.ideal = std::max(inst.ideal, done);
    for (const std::uint32_t m : {x.src, x.dst}) {
        if (m != switch_endpoint) inst.member_ideal[m] = std::max(inst.member_ideal[m], done);
    }
    return done;
}

void ReplayEngine::finish_transfer(std::uint32_t index, std::uint64_t t) {
    Instance& inst = instances_[index];
    if (inst.plan().scheduled()) {
        finish_scheduled(index, t);
        return;
    }
    const PlannedTransfer x = inst.plan().transfers()[t];
    for (std::uint32_t k = inst.dependent_offsets[t]; k < inst.dependent_offsets[t + 1]; ++k) {
        const std::uint32_t d = inst.dependents[k];
        if (--inst.pending[d] == 0) start_transfer(index, d);
    }
    transfer_done(index, x.src, x.dst);
}

void ReplayEngine::transfer_done(std::uint32_t index, std::uint32_t src, std::uint32_t dst) {
    Instance& inst = instances_[index];
    for (const std::uint32_t m : {src, dst}) {
        if (m == switch_endpoint) continue;
        if (--inst.member_active[m] == 0) inst.member_busy[m] += sim_.now() - inst.member_busy_since[m];
        if (--inst.member_left[m] == 0) finish_member(index, m);
    }
    if (--inst.transfers_left == 0) {
        inst.end = sim_.now();
        // Done: its record kept, its slot freed (a member without transfers may still be to arrive: then at its
        // arrival).
        if (inst.arrived == inst.members.size()) release_instance(index);
    }
}

void ReplayEngine::finish_member(std::uint32_t index, std::uint32_t member) {
    Instance& inst = instances_[index];
    const OpId op = inst.members[member];
    // Shown as one wait followed by one transfer: the member's time inside the call with none of its own
    // transfers in flight (waiting for peers, directly or through the algorithm's dependencies) comes first.
    const Time start = start_slot(op) = sim_.now() - inst.member_busy[member];
    note_ready(op, inst.member_arrival[member], start);
    if (inst.tap != FlowNetwork::no_tap) inst.member_end[member] = sim_.now();  // (a call being recorded)
    timeline_.critical_preds[op.index()] = inst.last_trigger;
    // Contention: how much later than on an empty network this member finished, counted from the collective's
    // first transfer.
    note_contention(op, std::min(std::max(Time{0}, (sim_.now() - inst.first_start) - inst.member_ideal[member]),
                                 sim_.now() - start));
    done_queue_.push_back(op);
}

}  // namespace clustersim::sim
