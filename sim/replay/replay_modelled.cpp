// Collectives timed by a model instead of flows: those of folded communicators (symmetry reduction,
// OpGraph::job_ranks: members that are not simulated mirror the simulated ones), and every one in the
// cost-model collective mode. Once every simulated member has arrived, the call takes the time NCCL's cost model
// gives for the whole communicator on the cluster (all-to-all: the busiest member's NVLink or NIC traffic), with
// the link efficiencies the flow simulation applies; or, for folded calls with FoldModel::flows, the time a
// replay of that call alone on the cluster takes. What this leaves out is in docs/models.md.
#include <algorithm>
#include <cmath>

#include "engine/hash.h"
#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

using engine::Time;
using traces::OpId;

void ReplayEngine::arrive_modelled(OpId id) {
    const traces::Op& op = g_.ops[id.index()];
    const std::uint32_t index = instance_of(partner(id));
    Instance& inst = instances_[index];
    const auto& ranks = g_.comms[inst.comm.index()].ranks;
    const std::uint32_t member = member_of(rank_of(op), op.comm());
    if (!inst.planned) inst.member_arrival.assign(ranks.size(), Time{0});
    inst.planned = true;
    inst.members[member] = id;
    inst.member_arrival[member] = sim_.now();
    note_arrival_trigger(inst, member, trigger(id));
    if (inst.first_arrival.count() < 0) inst.first_arrival = sim_.now();
    inst.last_arrival = sim_.now();
    if (++inst.arrived < ranks.size()) return;
    if (traced_only(id)) {
        // Unsized in the trace: the shortest member's kernel time, the one that waited least for the others.
        Time shortest{INT64_MAX};
        for (const OpId m : inst.members) shortest = std::min(shortest, g_.duration(m));
        inst.first_start = sim_.now();
        inst.ideal = shortest;
        sim_.schedule_after(inst.ideal, to_u16(EventKind::modelled_done), index);
        return;
    }
    // Every call of one shape (communicator, kind, size) costs the same: computed once.
    const std::array<std::uint64_t, 3> key = {inst.comm.value, static_cast<std::uint64_t>(op.collective), op.bytes()};
    auto cached = std::lower_bound(modelled_costs_.begin(), modelled_costs_.end(), key,
                                   [](const auto& entry, const auto& k) { return entry.first < k; });
    if (cached == modelled_costs_.end() || cached->first != key)
        cached = modelled_costs_.insert(cached, {key, modelled_cost(op, inst.comm)});
    const ModelledCost& cost = cached->second;
    inst.algorithm = cost.algorithm;
    inst.protocol = cost.protocol;
    inst.modelled_protocol = cost.modelled_protocol;
    inst.predicted_us = cost.predicted_us;
    inst.first_start = sim_.now();
    inst.ideal = cost.duration;
    sim_.schedule_after(inst.ideal, to_u16(EventKind::modelled_done), index);
}

ReplayEngine::ModelledCost ReplayEngine::modelled_cost(const traces::Op& op, traces::CommId comm_id) {
    const traces::Communicator& comm = g_.comms[comm_id.index()];
    if (comm.folded() && options_.fold_model == ReplayOptions::FoldModel::flows) return simulated_cost(op, comm);
    // The whole communicator's GPUs: a folded one's job members, else its ranks'.
    std::vector<topo::DeviceId> gpus;
    for (const std::uint32_t j : comm.job_members) gpus.push_back(cluster_.gpus()[j]);
    if (!comm.folded()) {
        for (const traces::RankId r : comm.ranks) gpus.push_back(gpu_of(r));
    }
    const auto n = static_cast<std::uint32_t>(gpus.size());
    ModelledCost cost;
    if (n < 2) return cost;  // nothing to exchange
    double us = 0;
    if (op.collective == traces::CollectiveKind::all_to_all) {
        // As the simulation runs an all-to-all: each member sends bytes/n to every
        // other, PXN-style when every node has the same number of members on an NVSwitch (data for a GPU on
        // another node goes over NVLink to the sender node's GPU on the destination's rail, then along the rail),
        // else over its direct route spread over the channels' ECMP paths. The call lasts the longest route's
        // latency plus the time its busiest link needs for all the bytes that cross it: the bisection the call
        // actually crosses, not one route's bottleneck. With protocols, as in the simulation: Simple's base latency
        // once, each transfer's per-hop latency, and its bytes over the route's NCCL efficiency.
        const NcclProtocol protocol = options_.protocol.value_or(NcclProtocol::simple);
        const double share = static_cast<double>(op.bytes()) / n;
        std::vector<std::int32_t> node(n);
        std::vector<std::uint32_t> local(n), slot(n);  // index among its node's members; its node's entry
        std::vector<std::pair<std::int32_t, std::vector<std::uint32_t>>> by_node;  // node -> members, in order
        for (std::uint32_t i = 0; i < n; ++i) {
            node[i] = cluster_.device(gpus[i]).node;
            auto it = std::find_if(by_node.begin(), by_node.end(), [&](const auto& e) { return e.first == node[i]; });
            if (it == by_node.end()) it = by_node.insert(by_node.end(), {node[i], {}});
            local[i] = static_cast<std::uint32_t>(it->second.size());
            slot[i] = static_cast<std::uint32_t>(it - by_node.begin());
            it->second.push_back(i);
        }
        const bool pxn =
            (!options_.algorithm || *options_.algorithm == *find_collective_algorithm("pxn")) && by_node.size() > 1 &&
            std::all_of(by_node.begin(), by_node.end(),
                        [&](const auto& e) { return e.second.size() == by_node.front().second.size(); }) &&
            std::all_of(gpus.begin(), gpus.end(), [&](topo::DeviceId g) { return node_switch(g).valid(); });
        const std::uint32_t channels = pxn ? 1 : std::max<std::uint32_t>(1, options_.channels);
        std::vector<double>& load = link_load_scratch_;
        load.assign(cluster_.links().size(), 0.0);
        std::vector<topo::LinkId>& touched = touched_scratch_;
        touched.clear();
        Time latency{0};
        const auto cross = [&](topo::DeviceId from, topo::DeviceId to, std::uint64_t key, double bytes) {
            route_scratch_.clear();
            net_.router().route(from, to, key, route_scratch_);
            Time route_latency{0};
            if (options_.protocols) {
                bytes = std::ceil(bytes * nccl_wire_factor(protocol) / route_efficiency(route_scratch_));
                const bool network = cluster_.device(from).node != cluster_.device(to).node;
                const bool nvlink =
                    !route_scratch_.empty() && cluster_.link(route_scratch_.front()).kind == topo::LinkKind::nvlink;
                route_latency +=
                    engine::from_seconds(nccl_hop_latency_us(network, nvlink, NcclAlgorithm::ring, protocol) * 1e-6);
            }
            for (const topo::LinkId l : route_scratch_) {
                route_latency += cluster_.link(l).latency;
                if (load[l.index()] == 0) touched.push_back(l);
                load[l.index()] += bytes;
            }
            return route_latency;
        };
        for (std::uint32_t i = 0; i < n; ++i) {
            for (std::uint32_t j = 0; j < n; ++j) {
                if (i == j) continue;
                const std::uint64_t pair = std::uint64_t{i} * n + j;
                if (pxn && node[i] != node[j]) {
                    const std::uint32_t relay = by_node[slot[i]].second[local[j]];
                    const Time hop =
                        relay == i ? Time{0} : cross(gpus[i], gpus[relay], engine::splitmix64(pair), share);
                    latency = std::max(latency, hop + cross(gpus[relay], gpus[j], engine::splitmix64(pair + 1), share));
                    continue;
                }
                for (std::uint32_t c = 0; c < channels; ++c)
                    latency = std::max(
                        latency, cross(gpus[i], gpus[j], engine::splitmix64(pair * channels + c), share / channels));
            }
        }
        double busiest_s = 0;
        for (const topo::LinkId l : touched)
            busiest_s = std::max(busiest_s, load[l.index()] / cluster_.link(l).bandwidth_bytes_per_s);
        us = (engine::to_seconds(latency) + busiest_s) * 1e6;
        if (options_.protocols) {
            us += nccl_base_latency_us(NcclAlgorithm::ring, protocol);
            cost.protocol = protocol;
            cost.modelled_protocol = true;
        }
        cost.algorithm = *find_collective_algorithm(pxn ? "pxn" : "direct");
        cost.predicted_us = us;
    } else {
        // NCCL's choice for the whole communicator (a forced algorithm NCCL's model does not know is timed as
        // its ring), then NCCL's formulas on the bandwidths the flow simulation's transfers reach.
        NcclTopologyInfo info = nccl_info(gpus);
        std::optional<NcclAlgorithm> forced;
        if (options_.algorithm)
            forced = *options_.algorithm == tree_algorithm_ ? NcclAlgorithm::tree : NcclAlgorithm::ring;
        const std::uint64_t bytes = nccl_bytes(op.collective, op.bytes(), n);
        const NcclEstimate choice = nccl_choose(op.collective, bytes, info, forced, options_.protocol);
        cost.algorithm = choice.algorithm == NcclAlgorithm::tree   ? tree_algorithm_
                         : choice.algorithm == NcclAlgorithm::nvls ? nvls_algorithm_
                                                                   : *find_collective_algorithm("ring");
        cost.protocol = choice.protocol;
        cost.modelled_protocol = true;
        cost.predicted_us = choice.time_us;
        if (info.nvlink) info.intra_bw_gbps *= nvlink_efficiency(gpus.front());
        info.inter_bw_gbps *= options_.nccl_link_efficiency[static_cast<std::size_t>(topo::LinkKind::infiniband)];
        us = nccl_choose(op.collective, bytes, info, choice.algorithm, choice.protocol).time_us;
    }
    cost.duration = engine::from_seconds(us * 1e-6);
    return cost;
}

ReplayEngine::ModelledCost ReplayEngine::simulated_cost(const traces::Op& op, const traces::Communicator& comm) {
    // The call alone: every member of the whole communicator issues it at time 0 on its job rank's GPU, with the
    // run's options (algorithm, protocols, channels, network model); its time is the nested replay's makespan.
    traces::OpGraph call;
    call.source = g_.source + " (folded call on '" + comm.name + "')";
    call.rank_count = static_cast<std::uint32_t>(comm.job_members.size());
    std::vector<traces::RankId> ranks;
    for (std::uint32_t r = 0; r < call.rank_count; ++r) ranks.push_back(traces::RankId{r});
    const traces::CommId c = call.communicator(comm.name, ranks);
    for (const traces::RankId r : ranks) {
        traces::Op member = op;
        member.stream = call.stream(r, "comm");
        member.name = call.intern(g_.names[op.name]);
        member.set_comm(c);
        member.set_algorithm(op.algorithm() == traces::no_algorithm ? traces::no_algorithm
                                                                    : call.intern(g_.names[op.algorithm()]));
        call.add(member);
    }
    ReplayOptions options = options_;
    options.rank_to_gpu = comm.job_members;
    options.progress = {};
    options.link_counters = false;
    options.nested = true;
    options.fold_by_symmetry = true;  // (the call alone, read for its makespan only)
    options.network.record_flows = false;
    options.network.record_link_utilization = false;
    const ReplayResult result = replay(call, cluster_, options);
    const CollectiveRecord& record = result.collectives.front();
    return ModelledCost{result.timeline.makespan, record.algorithm, record.protocol, record.modelled_protocol,
                        record.nccl_predicted_us};
}

void ReplayEngine::finish_modelled(std::uint32_t index) {
    Instance& inst = instances_[index];
    inst.end = sim_.now();
    inst.transfers_left = 0;
    for (std::size_t m = 0; m < inst.members.size(); ++m) {
        const OpId op = inst.members[m];
        // As for simulated calls: the wait for the last member first, then the modelled transfer time.
        const Time start = start_slot(op) = sim_.now() - inst.ideal;
        note_ready(op, inst.member_arrival[m], start);
        timeline_.critical_preds[op.index()] = inst.last_trigger;
        // (No contention: the model's time is an empty network's.)
        done_queue_.push_back(op);
    }
    release_instance(index);
}

}  // namespace clustersim::sim
