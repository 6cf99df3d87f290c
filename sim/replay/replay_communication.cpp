// Point-to-point transfers (rendezvous, or buffered sends), host<->device copies over PCIe, the routing of flow
// events to their owners, and the deadlock report.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/hash.h"
#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

using engine::Time;
using traces::OpId;
using traces::OpKind;

void ReplayEngine::arrive_p2p(OpId id) {
    const traces::Op& op = g_.ops[id.index()];
    set_comm_active(rank_of(op), +1);
    const std::uint32_t other = partner(id);
    CLUSTERSIM_CHECK(other != UINT32_MAX, "unmatched {}", g_.describe(id));
    const OpId send = op.kind == OpKind::send ? id : OpId{other};
    const OpId recv = op.kind == OpKind::send ? OpId{other} : id;
    if (g_.ops[send.index()].eager) {
        // Buffered send: it goes at once; the recv ends when both it is posted and the data is there.
        if (op.kind == OpKind::recv) {
            if (p2p_arrived_.find(send.value)) {
                p2p_arrived_.erase(send.value);
                start_slot(id) = sim_.now();  // (its trigger is its critical predecessor)
                done_queue_.push_back(id);
            } else {
                bool inserted = false;
                p2p_posted_.find_or_insert(id.value, inserted) = sim_.now();  // the data comes later
            }
            return;
        }
        start_slot(id) = sim_.now();  // (its trigger is its critical predecessor)
    } else {
        const Time* other_ready = p2p_posted_.find(other);
        if (!other_ready) {  // rendezvous: the peer has not been posted yet, wait for it
            bool inserted = false;
            p2p_posted_.find_or_insert(id.value, inserted) = sim_.now();
            return;
        }
        note_ready(OpId{other}, *other_ready, sim_.now());
        p2p_posted_.erase(other);
        const OpId later = trigger(id);  // the later side's trigger, for both
        for (const OpId side : {send, recv}) {
            start_slot(side) = sim_.now();
            timeline_.critical_preds[side.index()] = later;
        }
    }
    const auto& s = g_.ops[send.index()];
    const traces::RankId from = rank_of(s);
    // ECMP by connection, as a collective's transfers (replay_transfer_flows.cpp): the sends of a communicator from
    // one rank to another keep one path.
    const std::uint64_t key = connection_key(engine::hash_combine(s.comm().valid() ? s.comm().value : UINT32_MAX, 1),
                                             from.value, s.peer().value);
    const RouteView route = route_once(gpu_of(from), gpu_of(s.peer()), key, route_scratch_);
    const double efficiency = !options_.protocols ? 1.0
                              : route.kept        ? route.kept->efficiency
                                                  : route_efficiency(route.links);
    net_.start_flow_on_route(gpu_of(from), gpu_of(s.peer()), route.links,
                             static_cast<std::uint64_t>(std::ceil(static_cast<double>(s.bytes()) / efficiency)),
                             (owner_p2p << owner_shift) | send.value, 1, engine::Time{0},
                             route.kept ? &route.kept->cost : nullptr);
}

void ReplayEngine::start_copy(OpId id) {
    const traces::Op& op = g_.ops[id.index()];
    start_slot(id) = sim_.now();  // (its trigger is its critical predecessor)
    const traces::RankId rank = rank_of(op);
    const topo::DeviceId gpu = gpu_of(rank), host = rank_host_[rank.index()];
    if (!host.valid())
        throw engine::InputError(
            fmt::format("{}: the GPU of rank {} has no host CPU in the topology", g_.describe(id), rank.value));
    const bool to_device = op.kind == OpKind::memcpy_h2d;
    net_.start_flow(to_device ? host : gpu, to_device ? gpu : host, op.bytes(), engine::hash_combine(id.value, 2),
                    (owner_copy << owner_shift) | id.value);
}

void ReplayEngine::on_drained(std::uint32_t owner) {
    if ((owner >> owner_shift) != owner_collective) return;
    LiveTransfer& live = live_transfers_[owner & ((1U << owner_shift) - 1)];
    if (--live.flows_unsent > 0) return;
    const std::uint32_t index = live.instance;
    const std::uint64_t t = live.transfer;
    Instance& inst = instances_[index];
    if (inst.plan().scheduled()) {
        scheduled_drained(index, t);
        return;
    }
    const std::uint32_t next = inst.fifo_next[t];
    if (next != no_transfer && --inst.pending[next] == 0) start_transfer(index, next);
}

void ReplayEngine::on_flow(FlowId flow, std::uint32_t owner) {
    const std::uint32_t id = owner & ((1U << owner_shift) - 1);
    switch (owner >> owner_shift) {
        case owner_collective: {
            LiveTransfer& live = live_transfers_[id];
            if (--live.flows_left > 0) return;
            free_live_.push_back(id);
            finish_transfer(live.instance, live.transfer);
            return;
        }
        case owner_p2p: {
            const Time start = net_.start_time(flow);
            const Time delay = std::max(Time{0}, (sim_.now() - start) - net_.ideal_duration(flow));
            const std::uint32_t recv = partner(OpId{id});
            timeline_.transfers.push_back(traces::Transfer{OpId{id}, OpId{recv}, start, sim_.now()});
            note_contention(OpId{id}, delay);
            done_queue_.push_back(OpId{id});
            Time& recv_start = start_slot(OpId{recv});
            const Time* posted = g_.ops[id].eager ? p2p_posted_.find(recv) : nullptr;
            if (!g_.ops[id].eager || posted) {
                // The recv was posted (always so for a rendezvous): it ends with the data.
                if (posted) {
                    const Time ready = *posted;
                    p2p_posted_.erase(recv);
                    recv_start = std::max(ready, start);
                    note_ready(OpId{recv}, ready, recv_start);
                    if (ready < start) timeline_.critical_preds[recv] = OpId{id};  // (else: its trigger)
                }
                note_contention(OpId{recv}, std::min(delay, sim_.now() - recv_start));
                done_queue_.push_back(OpId{recv});
            } else {
                bool inserted = false;
                p2p_arrived_.find_or_insert(id, inserted) = 1;  // the recv, when posted, ends at once
            }
            return;
        }
        default: {
            note_contention(OpId{id}, (sim_.now() - net_.start_time(flow)) - net_.ideal_duration(flow));
            done_queue_.push_back(OpId{id});
            return;
        }
    }
}

std::string ReplayEngine::deadlock_report() const {
    std::string report;
    auto add = [&](const std::string& line) { report += (report.empty() ? "" : "; ") + line; };
    std::vector<std::uint32_t> call_seq(calls_.size(), 0);
    {
        std::vector<std::uint32_t> per_comm(g_.comms.size(), 0);
        for (std::size_t i = 0; i < calls_.size(); ++i) call_seq[i] = per_comm[call_records_[i].comm.index()]++;
    }
    for (std::uint32_t r = 0; r < g_.rank_count; ++r) {
        for (std::uint32_t k = rank_stream_offsets_[r]; k < rank_stream_offsets_[r + 1]; ++k) {
            const OpId current = stream_run_[rank_streams_[k].index()].current;
            if (!current.valid()) continue;
            const traces::Op& op = g_.ops[current.index()];
            if (op.kind == OpKind::collective) {
                // (A collective in progress has arrived: its call is in flight.)
                const std::uint32_t call = partner(current);
                if (calls_[call].slot == UINT32_MAX) continue;
                const Instance& inst = instances_[calls_[call].slot];
                const auto& ranks = g_.comms[inst.comm.index()].ranks;
                std::string missing;
                for (std::size_t m = 0; m < ranks.size(); ++m) {
                    if (!inst.members[m].valid())
                        missing += fmt::format("{}{}", missing.empty() ? "" : ", ", ranks[m].value);
                }
                add(fmt::format("rank {} waits in {} #{} on '{}' for rank {}", r,
                                traces::collective_kind_name(op.collective), call_seq[call],
                                g_.comms[inst.comm.index()].name, missing));
            } else if (op.kind == OpKind::send || op.kind == OpKind::recv) {
                add(fmt::format("rank {} waits in {} {} rank {} ('{}')", r, op.kind == OpKind::send ? "send" : "recv",
                                op.kind == OpKind::send ? "to" : "from", op.peer().value, g_.names[op.name]));
            }
        }
    }
    if (report.empty()) report = "no rank is inside a communication call; ops wait on dependencies that never complete";
    return fmt::format("deadlock: {} of {} ops never ran: {}", g_.ops.size() - completed_, g_.ops.size(), report);
}

std::string ReplayEngine::describe_owner(std::uint32_t owner) const {
    const std::uint32_t id = owner & ((1U << owner_shift) - 1);
    switch (owner >> owner_shift) {
        case owner_collective: {
            const std::uint64_t t = live_transfers_[id].transfer;
            const Instance& inst = instances_[live_transfers_[id].instance];
            const PlannedTransfer tr = inst.plan().transfer(t);
            const auto& ranks = g_.comms[inst.comm.index()].ranks;
            const auto member = [&](std::uint32_t m) {
                return m < ranks.size() ? fmt::format("rank {}", g_.job_rank(ranks[m])) : std::string("the switch");
            };
            OpId op;
            for (const OpId m : inst.members)
                if (!op.valid() && m.valid()) op = m;
            return fmt::format("transfer {} ({} -> {}) of {}", t, member(tr.src), member(tr.dst),
                               op.valid() ? g_.describe(op) : "a collective");
        }
        default:  // a send (point-to-point) or a copy: its op
            return g_.describe(OpId{id});
    }
}

}  // namespace clustersim::sim
