// Collectives timed by a model instead of flows: those of folded communicators (symmetry reduction,
// OpGraph::job_ranks: members that are not simulated mirror the simulated ones), and every one in the
// cost-model collective mode. Once every simulated member has arrived, the call takes the time NCCL's cost model
// gives for the whole communicator on the cluster (all-to-all: the busiest member's NVLink or NIC traffic), with
// the link efficiencies the flow simulation applies; or, for folded calls with FoldModel::flows, the time a
// replay of that call alone on the cluster takes. What this leaves out is in docs/models.md.
#include <algorithm>
#include <cmath>

#include "sim/replay_engine.h"

namespace clustersim::sim {

using engine::Time;
using traces::OpId;

void ReplayEngine::arrive_modelled(OpId id) {
    const traces::Op& op = g_.ops[id.index()];
    const std::uint32_t index = partner_[id.index()];
    Instance& inst = instances_[index];
    const auto& ranks = g_.comms[inst.comm.index()].ranks;
    const auto member = static_cast<std::uint32_t>(std::find(ranks.begin(), ranks.end(), op.rank) - ranks.begin());
    inst.planned = true;
    inst.members[member] = id;
    inst.last_trigger = trigger_[id.index()];
    if (inst.first_arrival.count() < 0) inst.first_arrival = sim_.now();
    inst.last_arrival = sim_.now();
    if (++inst.arrived < ranks.size()) return;
    if (traced_only(op)) {
        // Unsized in the trace: the shortest member's kernel time, the one that waited least for the others.
        Time shortest{INT64_MAX};
        for (const OpId m : inst.members) shortest = std::min(shortest, g_.ops[m.index()].duration);
        inst.first_start = sim_.now();
        inst.ideal = shortest;
        sim_.schedule_after(inst.ideal, to_u16(EventKind::modelled_done), index);
        return;
    }
    // Every call of one shape (communicator, kind, size) costs the same: computed once.
    const std::array<std::uint64_t, 3> key = {inst.comm.value, static_cast<std::uint64_t>(op.collective), op.bytes};
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
        // As the simulation runs an all-to-all (direct, without NCCL's protocol model): each member sends bytes/n
        // to every other, to those of its node over NVLink, to the others through its NIC (one per GPU on
        // rail-optimized nodes); the busier of the two bounds the call, after the longest route's latency.
        const topo::DeviceId first = gpus.front();
        std::uint32_t local = 0;
        double nic_bw = INFINITY;
        Time latency{0};
        for (const topo::DeviceId q : gpus) {
            if (q == first) continue;
            const double bottleneck = route_bottleneck(first, q);
            Time route_latency{0};
            for (const topo::LinkId l : route_scratch_) route_latency += cluster_.link(l).latency;
            latency = std::max(latency, route_latency);
            if (cluster_.device(q).node == cluster_.device(first).node)
                ++local;
            else
                nic_bw = std::min(nic_bw, bottleneck);
        }
        const NcclTopologyInfo info = nccl_info(gpus);
        const double share = static_cast<double>(op.bytes) / n;
        const double intra_s = local * share / (info.intra_bw_gbps * 1e9);
        const double inter_s = local + 1 == n ? 0 : (n - 1 - local) * share / nic_bw;
        us = (engine::to_seconds(latency) + std::max(intra_s, inter_s)) * 1e6;
        cost.algorithm = *find_collective_algorithm("direct");
        cost.predicted_us = us;
    } else {
        // NCCL's choice for the whole communicator (a forced algorithm NCCL's model does not know is timed as
        // its ring), then NCCL's formulas on the bandwidths the flow simulation's transfers reach.
        NcclTopologyInfo info = nccl_info(gpus);
        std::optional<NcclAlgorithm> forced;
        if (options_.algorithm)
            forced = *options_.algorithm == tree_algorithm_ ? NcclAlgorithm::tree : NcclAlgorithm::ring;
        const std::uint64_t bytes = nccl_bytes(op.collective, op.bytes, n);
        const NcclEstimate choice = nccl_choose(op.collective, bytes, info, forced, options_.protocol);
        cost.algorithm = choice.algorithm == NcclAlgorithm::tree   ? tree_algorithm_
                         : choice.algorithm == NcclAlgorithm::nvls ? nvls_algorithm_
                                                                   : *find_collective_algorithm("ring");
        cost.protocol = choice.protocol;
        cost.modelled_protocol = true;
        cost.predicted_us = choice.time_us;
        const auto efficiency = [&](topo::LinkKind kind) {
            return options_.nccl_link_efficiency[static_cast<std::size_t>(kind)];
        };
        if (info.nvlink) info.intra_bw_gbps *= efficiency(topo::LinkKind::nvlink);
        info.inter_bw_gbps *= efficiency(topo::LinkKind::infiniband);
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
        member.rank = r;
        member.stream = call.stream(r, "comm");
        member.name = call.intern(g_.names[op.name]);
        member.comm = c;
        member.algorithm =
            op.algorithm == traces::no_algorithm ? traces::no_algorithm : call.intern(g_.names[op.algorithm]);
        call.add(member);
    }
    ReplayOptions options = options_;
    options.rank_to_gpu = comm.job_members;
    options.progress = {};
    options.link_counters = false;
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
        traces::OpTiming& t = timeline_.ops[op.index()];
        // As for simulated calls: the wait for the last member first, then the modelled transfer time.
        t.start = sim_.now() - inst.ideal;
        t.critical_pred = inst.last_trigger;
        t.contention = Time{0};
        done_queue_.push_back(op);
    }
}

}  // namespace clustersim::sim
