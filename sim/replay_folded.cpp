// Folded collectives (symmetry reduction, OpGraph::job_ranks): a communicator with members that are not
// simulated, whose part mirrors the simulated members'. Its calls are not expanded into flows: once every
// simulated member has arrived, the call takes the time NCCL's cost model gives for the whole communicator on
// the cluster (all-to-all: the busiest member's NVLink or NIC traffic), with the link efficiencies the flow
// simulation applies. What this leaves out is in docs/models.md (symmetry reduction).
#include <algorithm>
#include <cmath>

#include "sim/replay_engine.h"

namespace clustersim::sim {

using engine::Time;
using traces::OpId;

void ReplayEngine::arrive_folded(OpId id) {
    const traces::Op& op = g_.ops[id.index()];
    const std::uint32_t index = partner_[id.index()];
    Instance& inst = instances_[index];
    const auto& ranks = g_.comms[inst.comm.index()].ranks;
    const auto member = static_cast<std::uint32_t>(std::find(ranks.begin(), ranks.end(), op.rank) - ranks.begin());
    if (!inst.planned) {
        inst.planned = true;
        inst.member_arrival.assign(ranks.size(), Time{0});
    }
    inst.members[member] = id;
    inst.member_arrival[member] = sim_.now();
    inst.last_trigger = trigger_[id.index()];
    if (inst.first_arrival.count() < 0) inst.first_arrival = sim_.now();
    inst.last_arrival = sim_.now();
    if (++inst.arrived < ranks.size()) return;
    inst.first_start = sim_.now();
    inst.ideal = folded_duration(op, index);
    sim_.schedule_after(inst.ideal, to_u16(EventKind::folded_done), index);
}

Time ReplayEngine::folded_duration(const traces::Op& op, std::uint32_t index) {
    Instance& inst = instances_[index];
    const std::array<std::uint64_t, 3> key = {inst.comm.value, static_cast<std::uint64_t>(op.collective), op.bytes};
    const auto cached = std::lower_bound(folded_durations_.begin(), folded_durations_.end(), key,
                                         [](const auto& entry, const auto& k) { return entry.first < k; });
    const traces::Communicator& comm = g_.comms[inst.comm.index()];
    std::vector<topo::DeviceId> gpus;
    for (const std::uint32_t j : comm.job_members) gpus.push_back(cluster_.gpus()[j]);
    NcclTopologyInfo info = nccl_info(gpus);
    const auto n = static_cast<std::uint32_t>(gpus.size());
    std::optional<NcclAlgorithm> forced;
    if (options_.algorithm) forced = *options_.algorithm == tree_algorithm_ ? NcclAlgorithm::tree : NcclAlgorithm::ring;
    const NcclEstimate raw =
        nccl_choose(op.collective, nccl_bytes(op.collective, op.bytes, n), info, forced, options_.protocol);
    inst.algorithm = raw.algorithm == NcclAlgorithm::tree   ? tree_algorithm_
                     : raw.algorithm == NcclAlgorithm::nvls ? nvls_algorithm_
                                                            : *find_collective_algorithm("ring");
    inst.protocol = raw.protocol;
    inst.modelled_protocol = true;
    inst.predicted_us = raw.time_us;
    if (cached != folded_durations_.end() && cached->first == key) return cached->second;
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
            const bool same_node = cluster_.device(q).node == cluster_.device(first).node;
            const double bottleneck = route_bottleneck(first, q);
            Time route_latency{0};
            for (const topo::LinkId l : route_scratch_) route_latency += cluster_.link(l).latency;
            latency = std::max(latency, route_latency);
            if (same_node)
                ++local;
            else
                nic_bw = std::min(nic_bw, bottleneck);
        }
        const double share = static_cast<double>(op.bytes) / n;
        const double intra_s = local * share / (info.intra_bw_gbps * 1e9);
        const double inter_s = local + 1 == n ? 0 : (n - 1 - local) * share / nic_bw;
        us = engine::to_seconds(latency) * 1e6 + std::max(intra_s, inter_s) * 1e6;
        inst.modelled_protocol = false;
        inst.predicted_us = us;
    } else {
        // NCCL's formulas on the bandwidths the flow simulation's transfers reach.
        const auto efficiency = [&](topo::LinkKind kind) {
            return options_.nccl_link_efficiency[static_cast<std::size_t>(kind)];
        };
        if (info.nvlink) info.intra_bw_gbps *= efficiency(topo::LinkKind::nvlink);
        info.inter_bw_gbps *= efficiency(topo::LinkKind::infiniband);
        const auto algorithm = raw.algorithm;
        us = nccl_choose(op.collective, nccl_bytes(op.collective, op.bytes, n), info, algorithm, raw.protocol).time_us;
    }
    const Time duration = engine::from_seconds(us * 1e-6);
    folded_durations_.insert(cached, {key, duration});
    return duration;
}

void ReplayEngine::finish_folded(std::uint32_t index) {
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
    std::vector<Time>().swap(inst.member_arrival);
}

}  // namespace clustersim::sim
