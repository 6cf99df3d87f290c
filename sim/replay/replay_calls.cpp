// A collective call's life in the replay: its in-flight state in a slot from its first member's arrival until it is
// done (then its record is kept and the slot reused), and each member's place in its communicator.
#include <algorithm>

#include "engine/error.h"
#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

using traces::OpId;

void ReplayEngine::index_rank_comms() {
    rank_comm_offsets_.assign(g_.rank_count + 1, 0);
    for (const traces::Communicator& comm : g_.comms) {
        for (const traces::RankId r : comm.ranks) ++rank_comm_offsets_[r.index() + 1];
    }
    for (std::size_t r = 0; r < g_.rank_count; ++r) rank_comm_offsets_[r + 1] += rank_comm_offsets_[r];
    rank_comms_.resize(rank_comm_offsets_[g_.rank_count]);
    std::vector<std::uint32_t> cursor(rank_comm_offsets_.begin(), rank_comm_offsets_.end() - 1);
    for (std::uint32_t c = 0; c < g_.comms.size(); ++c) {  // (communicators in id order: each rank's list sorted)
        const auto& ranks = g_.comms[c].ranks;
        for (std::uint32_t m = 0; m < ranks.size(); ++m) rank_comms_[cursor[ranks[m].index()]++] = {c, m};
    }
}

std::uint32_t ReplayEngine::member_of(traces::RankId rank, traces::CommId comm) const {
    const auto first = rank_comms_.begin() + rank_comm_offsets_[rank.index()];
    const auto last = rank_comms_.begin() + rank_comm_offsets_[rank.index() + 1];
    const auto it =
        std::lower_bound(first, last, comm.value, [](const auto& e, std::uint32_t c) { return e.first < c; });
    CLUSTERSIM_CHECK(it != last && it->first == comm.value, "rank {} is not a member of communicator {}", rank.value,
                     comm.value);
    return it->second;
}

std::uint32_t ReplayEngine::instance_of(std::uint32_t call) {
    Call& c = calls_[call];
    if (c.slot != UINT32_MAX) return c.slot;
    if (!free_instances_.empty()) {
        c.slot = free_instances_.back();
        free_instances_.pop_back();
    } else {
        c.slot = static_cast<std::uint32_t>(instances_.size());
        instances_.emplace_back();
    }
    Instance& inst = instances_[c.slot];  // (fresh: new, or reset when released)
    inst.call = call;
    inst.comm = call_records_[call].comm;
    inst.members.assign(g_.comms[inst.comm.index()].ranks.size(), OpId::invalid());
    return c.slot;
}

void ReplayEngine::release_instance(std::uint32_t index) {
    Instance& inst = instances_[index];
    if (inst.tap != FlowNetwork::no_tap) close_recording(index);
    Call& call = calls_[inst.call];
    OpId op;
    for (const OpId m : inst.members) {
        if (!op.valid() && m.valid()) op = m;
    }
    // (The record's communicator and size were set with the call.)
    CollectiveRecord& r = call_records_[inst.call];
    r.algorithm = inst.algorithm;
    r.modelled_protocol = inst.modelled_protocol;
    r.protocol = inst.protocol;
    r.nccl_predicted_us = inst.predicted_us;
    r.first_arrival = inst.first_arrival;
    r.last_arrival = inst.last_arrival;
    r.end = inst.end;  // (released only when done: its transfers' end; never set for a call without transfers)
    r.op = op;
    call.slot = UINT32_MAX;
    reset_instance(inst);
    free_instances_.push_back(index);
}

void ReplayEngine::reset_instance(Instance& inst) {
    // A fresh state; the small per-member and per-transfer buffers and the ring states keep their memory for the
    // next call in this slot (most calls are small and alike: a GPT-3 iteration on 1,024 GPUs makes 1.2 M
    // tensor-parallel calls of 8 members, each of which allocated a dozen buffers). Large buffers are given back. (A
    // repeated call's plan is read where the plan cache keeps it: nothing to keep.)
    Instance fresh;
    constexpr std::size_t kept_bytes = std::size_t{64} << 10;
    const auto keep = [](auto& to, auto& from) {
        if (from.capacity() * sizeof(from[0]) > kept_bytes) return;
        from.clear();
        to.swap(from);
    };
    keep(fresh.members, inst.members);
    keep(fresh.member_left, inst.member_left);
    keep(fresh.member_active, inst.member_active);
    keep(fresh.member_busy_since, inst.member_busy_since);
    keep(fresh.member_busy, inst.member_busy);
    keep(fresh.member_arrival, inst.member_arrival);
    keep(fresh.member_ideal, inst.member_ideal);
    keep(fresh.slot_routes, inst.slot_routes);
    keep(fresh.closed, inst.closed);
    keep(fresh.span_offsets, inst.span_offsets);
    keep(fresh.spans, inst.spans);
    keep(fresh.member_end, inst.member_end);
    keep(fresh.edge_costs, inst.edge_costs);
    keep(fresh.arrival_order, inst.arrival_order);
    keep(fresh.staged, inst.staged);
    keep(fresh.held, inst.held);
    if (inst.ring_states.capacity_bytes() <= kept_bytes) {
        inst.ring_states.reset(0);
        fresh.ring_states = std::move(inst.ring_states);
    }
    inst = std::move(fresh);
}

}  // namespace clustersim::sim
