// Communication in the replay: collective instances (start when the last member arrives, then run their plan
// step by step as flows), point-to-point pairs (a rendezvous: the transfer starts when both sides are posted),
// host<->device copies over PCIe, and the deadlock report.
#include <algorithm>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/hash.h"
#include "sim/replay_engine.h"

namespace clustersim::sim {

using engine::Time;
using traces::OpId;
using traces::OpKind;

void ReplayEngine::arrive_collective(OpId id) {
    const traces::Op& op = g_.ops[id.index()];
    set_comm_active(op.rank, +1);  // the NCCL kernel is resident (and spinning) from its launch
    const std::uint32_t index = partner_[id.index()];
    Instance& inst = instances_[index];
    const auto& ranks = g_.comms[inst.comm.index()].ranks;
    const auto member = static_cast<std::size_t>(std::find(ranks.begin(), ranks.end(), op.rank) - ranks.begin());
    inst.members[member] = id;
    inst.last_trigger = trigger_[id.index()];
    if (++inst.arrived < ranks.size()) return;
    inst.start = sim_.now();
    CollectiveAlgorithm algorithm = default_algorithm(op.collective);
    if (op.algorithm != traces::no_algorithm) {
        if (const auto hinted = parse_collective_algorithm(g_.names[op.algorithm])) algorithm = *hinted;
    }
    if (options_.algorithm) algorithm = *options_.algorithm;
    inst.plan = plan_collective(op.collective, algorithm, static_cast<std::uint32_t>(ranks.size()), op.bytes);
    for (const OpId m : inst.members) {
        timeline_.ops[m.index()].start = sim_.now();
        timeline_.ops[m.index()].critical_pred = inst.last_trigger;
    }
    start_step(index);
}

void ReplayEngine::start_step(std::uint32_t index) {
    Instance& inst = instances_[index];
    while (inst.step < inst.plan.steps() && inst.plan.step_offsets[inst.step] == inst.plan.step_offsets[inst.step + 1])
        ++inst.step;
    if (inst.step == inst.plan.steps()) {
        const Time took = sim_.now() - inst.start;
        for (const OpId m : inst.members) {
            timeline_.ops[m.index()].contention = std::max(Time{0}, took - inst.ideal);
            done_queue_.push_back(m);
        }
        return;
    }
    const auto& ranks = g_.comms[inst.comm.index()].ranks;
    inst.step_ideal = Time{0};
    for (std::uint32_t k = inst.plan.step_offsets[inst.step]; k < inst.plan.step_offsets[inst.step + 1]; ++k) {
        const PlannedTransfer& t = inst.plan.transfers[k];
        // One flow per channel, with consecutive flow keys from a hashed base, so that ECMP spreads the channels
        // of a transfer over the equal-cost paths. Channels that land on the same path travel as one flow of
        // that many shares (same contention, fewer events). The first channels take the remainder bytes.
        const std::uint64_t key = engine::hash_combine(index, k);
        const std::uint32_t channels = t.bytes == 0 ? 1 : std::max<std::uint32_t>(1, options_.channels);
        const topo::DeviceId src = gpu_of(ranks[t.src]), dst = gpu_of(ranks[t.dst]);
        channel_routes_.resize(channels);
        for (std::uint32_t c = 0; c < channels; ++c) {
            channel_routes_[c].clear();
            net_.router().route(src, dst, key + c, channel_routes_[c]);
        }
        for (std::uint32_t c = 0; c < channels; ++c) {
            bool merged_before = false;
            for (std::uint32_t e = 0; e < c && !merged_before; ++e)
                merged_before = channel_routes_[e] == channel_routes_[c];
            if (merged_before) continue;
            std::uint64_t bytes = 0;
            std::uint32_t weight = 0;
            for (std::uint32_t e = c; e < channels; ++e) {
                if (channel_routes_[e] != channel_routes_[c]) continue;
                bytes += t.bytes / channels + (e < t.bytes % channels ? 1 : 0);
                ++weight;
            }
            const FlowId f = net_.start_flow_on_route(src, dst, channel_routes_[c], bytes,
                                                      (owner_collective << owner_shift) | index, weight);
            inst.step_ideal = std::max(inst.step_ideal, net_.ideal_duration(f));
            ++inst.outstanding;
        }
    }
}

void ReplayEngine::arrive_p2p(OpId id) {
    const traces::Op& op = g_.ops[id.index()];
    set_comm_active(op.rank, +1);
    const std::uint32_t partner = partner_[id.index()];
    CLUSTERSIM_CHECK(partner != UINT32_MAX, "unmatched {}", g_.describe(id));
    const traces::OpTiming& other = timeline_.ops[partner];
    if (other.ready.count() < 0) return;  // the peer has not been posted yet: wait for it
    const OpId send = op.kind == OpKind::send ? id : OpId{partner};
    const OpId recv = op.kind == OpKind::send ? OpId{partner} : id;
    for (const OpId side : {send, recv}) {
        timeline_.ops[side.index()].start = sim_.now();
        timeline_.ops[side.index()].critical_pred = trigger_[id.index()];  // the later side's trigger
    }
    const auto& s = g_.ops[send.index()];
    net_.start_flow(gpu_of(s.rank), gpu_of(s.peer), s.bytes, engine::hash_combine(send.value, 1),
                    (owner_p2p << owner_shift) | send.value);
}

void ReplayEngine::start_copy(OpId id) {
    const traces::Op& op = g_.ops[id.index()];
    traces::OpTiming& t = timeline_.ops[id.index()];
    t.start = sim_.now();
    t.critical_pred = trigger_[id.index()];
    const topo::DeviceId gpu = gpu_of(op.rank), host = rank_host_[op.rank.index()];
    if (!host.valid())
        throw engine::InputError(
            fmt::format("{}: the GPU of rank {} has no host CPU in the topology", g_.describe(id), op.rank.value));
    const bool to_device = op.kind == OpKind::memcpy_h2d;
    net_.start_flow(to_device ? host : gpu, to_device ? gpu : host, op.bytes, engine::hash_combine(id.value, 2),
                    (owner_copy << owner_shift) | id.value);
}

void ReplayEngine::on_flow(FlowId flow) {
    const std::uint32_t owner = net_.owner(flow);
    const std::uint32_t id = owner & ((1U << owner_shift) - 1);
    switch (owner >> owner_shift) {
        case owner_collective: {
            Instance& inst = instances_[id];
            if (--inst.outstanding > 0) return;
            inst.ideal += inst.step_ideal;
            ++inst.step;
            start_step(id);
            return;
        }
        case owner_p2p: {
            const Time delay = std::max(Time{0}, (sim_.now() - net_.start_time(flow)) - net_.ideal_duration(flow));
            timeline_.transfers.push_back(
                traces::Transfer{OpId{id}, OpId{partner_[id]}, net_.start_time(flow), sim_.now()});
            for (const std::uint32_t side : {id, partner_[id]}) {
                timeline_.ops[side].contention = delay;
                done_queue_.push_back(OpId{side});
            }
            return;
        }
        default: {
            timeline_.ops[id].contention =
                std::max(Time{0}, (sim_.now() - net_.start_time(flow)) - net_.ideal_duration(flow));
            done_queue_.push_back(OpId{id});
            return;
        }
    }
}

std::string ReplayEngine::deadlock_report() const {
    std::string report;
    auto add = [&](const std::string& line) { report += (report.empty() ? "" : "; ") + line; };
    std::vector<std::uint32_t> instance_seq(instances_.size(), 0);
    {
        std::vector<std::uint32_t> per_comm(g_.comms.size(), 0);
        for (std::size_t i = 0; i < instances_.size(); ++i) instance_seq[i] = per_comm[instances_[i].comm.index()]++;
    }
    for (std::uint32_t r = 0; r < g_.rank_count; ++r) {
        for (std::uint32_t k = rank_stream_offsets_[r]; k < rank_stream_offsets_[r + 1]; ++k) {
            const OpId current = stream_current_[rank_streams_[k].index()];
            if (!current.valid()) continue;
            const traces::Op& op = g_.ops[current.index()];
            if (op.kind == OpKind::collective) {
                const Instance& inst = instances_[partner_[current.index()]];
                const auto& ranks = g_.comms[inst.comm.index()].ranks;
                std::string missing;
                for (std::size_t m = 0; m < ranks.size(); ++m) {
                    if (!inst.members[m].valid())
                        missing += fmt::format("{}{}", missing.empty() ? "" : ", ", ranks[m].value);
                }
                add(fmt::format("rank {} waits in {} #{} on '{}' for rank {}", r,
                                traces::collective_kind_name(op.collective), instance_seq[partner_[current.index()]],
                                g_.comms[inst.comm.index()].name, missing));
            } else if (op.kind == OpKind::send || op.kind == OpKind::recv) {
                add(fmt::format("rank {} waits in {} {} rank {} ('{}')", r, op.kind == OpKind::send ? "send" : "recv",
                                op.kind == OpKind::send ? "to" : "from", op.peer.value, g_.names[op.name]));
            }
        }
    }
    if (report.empty()) report = "no rank is inside a communication call; ops wait on dependencies that never complete";
    return fmt::format("deadlock: {} of {} ops never ran: {}", g_.ops.size() - completed_, g_.ops.size(), report);
}

}  // namespace clustersim::sim
