// A collective call's state in the replay (ReplayEngine): its record for the outputs (CollectiveCall), and while it
// is in flight, its plan, its members' progress and how it is timed (CallInstance: as flows, in closed form, or from
// a record), with the small per-transfer and per-route records these keep.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/time.h"
#include "sim/collectives/collective_plan.h"
#include "sim/collectives/nccl_tuner.h"
#include "sim/network/flow_network.h"
#include "sim/replay/call_records.h"
#include "sim/replay/plan_cache.h"
#include "sim/replay/replay.h"
#include "sim/replay/transfer_states.h"

namespace clustersim::sim {

/// A flow's bytes on the wire and its latency beyond the route's (protocol_cost).
struct FlowCost {
    std::uint64_t bytes = 0;
    engine::Time extra{};
};
/// The protocol cost of the last flow started on one route, with what it depends on besides the route: the
/// transfers of a collective repeat the same bytes and flags on the same routes, step after step and call after
/// call.
struct CostMemo {
    struct Key {
        std::uint64_t bytes = UINT64_MAX, channel_bytes = 0;
        std::size_t algorithm = 0;
        NcclProtocol protocol = NcclProtocol::simple;
        bool modelled = false, first = false, reduces = false;
        bool operator==(const Key&) const = default;
    };
    Key key;
    FlowCost cost;
};
/// The kept route a ring slot's transfers took last (kept_routes_[kept] while epoch is routes_epoch_), for the
/// (source, destination) pair `pair`: a ring edge sends step after step between the same two GPUs.
struct SlotRoute {
    std::uint64_t pair = UINT64_MAX;
    std::uint32_t kept = UINT32_MAX;
    std::uint32_t epoch = 0;
    CostMemo memo;  // its last single flow's cost on that route (a ring's steps repeat it)
};
/// One collective call, for the whole run: what its members' sizes are and where its state is while in flight, a
/// CallInstance (a slot of instances_, reused once the call is done: a 1,024-GPU GPT-3 iteration has 1.2 M calls,
/// and 664 bytes of in-flight state each were a gigabyte). What the outputs keep of it, its CollectiveRecord, is in
/// an array of its own by the same index (ReplayEngine::call_records_), handed to the result without a copy.
struct CollectiveCall {
    std::vector<std::uint64_t> member_bytes;  // by member, only when the members' sizes differ
    std::uint32_t slot = UINT32_MAX;          // its CallInstance while in flight
};
/// A transfer of a call timed in closed form (replay_closed_form.cpp), by its index in the plan.
struct ClosedTransfer {
    engine::Time ready{0};      // when the last of its conditions met so far was
    engine::Time ideal_done{};  // its end on an empty network (ideal_end)
    std::uint32_t pending = 0;  // conditions not yet met
};
/// A transfer timed, not yet committed to the call's and the network's state.
/// (With what committing it reads: its ends (members), its route in route_pool_, and the transfers whose
/// ideal ends it waits for beside a listed plan's dependencies: a ring's data and FIFO predecessors, a listed
/// transfer's FIFO predecessor.)
struct StagedTransfer {
    std::uint64_t transfer = 0;
    engine::Time start, drained, arrived, ideal;
    double rate = 0;
    std::uint64_t bytes = 0;
    std::uint32_t src = 0, dst = 0;
    std::uint32_t route_offset = 0, route_length = 0;
    std::uint64_t waits_for[2] = {UINT64_MAX, UINT64_MAX};
};
/// What a closed-form call's edge last sent cost: its protocol cost and timing for pieces of `bytes`.
struct EdgeCost {
    std::uint64_t bytes = UINT64_MAX;
    bool first_of_call = false;
    bool reduces = false;
    FlowCost cost;
    FlowNetwork::AloneTiming timing;
};
struct CallInstance {                 // one collective call in flight, across its members
    std::uint32_t call = UINT32_MAX;  // calls_
    traces::CommId comm;
    std::vector<traces::OpId> members;  // by member index; invalid until that member arrives
    std::uint32_t arrived = 0;
    traces::OpId last_trigger;               // trigger of the member that arrived last so far (note_arrival_trigger)
    std::uint32_t last_member = UINT32_MAX;  // that member
    bool planned = false;
    /// The call's plan: a kept one (PlanCache: its entries stay put for the run) read in place, or its own.
    [[nodiscard]] const CollectivePlan& plan() const { return kept_plan != nullptr ? *kept_plan : own_plan; }
    void set_plan(CollectivePlan&& plan) {
        own_plan = std::move(plan);
        kept_plan = nullptr;
    }
    void use_kept_plan(const CollectivePlan& plan) { kept_plan = &plan; }
    const CollectivePlan* kept_plan = nullptr;  // (not copied: a kept plan is read by every call that repeats it)
    CollectivePlan own_plan;
    std::vector<std::uint32_t> pending;            // by transfer: unmet dependencies and absent endpoints
    std::vector<std::uint32_t> dependent_offsets;  // by transfer (CSR): transfers waiting for it
    std::vector<std::uint32_t> dependents;
    std::vector<std::uint32_t> member_offsets;  // by member (CSR): transfers it sends or receives
    std::vector<std::uint32_t> member_transfers;
    std::vector<std::uint32_t> member_left;        // by member: its transfers not yet done
    std::vector<std::uint32_t> member_active;      // by member: its transfers in flight
    std::vector<engine::Time> member_busy_since;   // by member
    std::vector<engine::Time> member_busy;         // by member: time with a transfer of its own in flight
    std::vector<engine::Time> member_arrival;      // by member: when it entered the call
    std::vector<engine::Time> member_ideal;        // by member: its last transfer's end on an empty network
    std::vector<std::uint32_t> fifo_next;          // by transfer: the transfer waiting for it to be sent
    std::vector<engine::Time> ideal_done;          // by transfer: finish on an empty network
    CachedPlan::RouteHint* route_hints = nullptr;  // by transfer, its kept plan's (null: a plan not kept)
    engine::Time first_start{-1};
    engine::Time ideal{};  // longest chain of empty-network transfer times
    std::uint64_t transfers_left = 0;
    TransferStates ring_states;          // a scheduled plan's transfers in flight or partly ready (replay_rings.cpp)
    std::vector<SlotRoute> slot_routes;  // a scheduled plan's kept route by slot (its edge, step after step)
    // A call timed in closed form (replay_closed_form.cpp): its transfers, each member's transfers' spans
    // from start to arrival (CSR by member, filled as they are committed), the links it holds.
    bool closed_form = false;
    std::vector<ClosedTransfer> closed;
    std::vector<std::uint32_t> span_offsets;
    std::vector<std::pair<engine::Time, engine::Time>> spans;
    std::vector<engine::Time> member_end;      // by member: its latest arrival timed so far (recorded: its end)
    std::vector<EdgeCost> edge_costs;          // by slot
    std::vector<std::uint32_t> arrival_order;  // members, as they arrived
    std::vector<StagedTransfer> staged;        // timed this instant, committed at its end
    bool commit_pending = false;
    std::uint32_t members_done = 0;
    std::vector<topo::LinkId> held;
    // Repeated calls (replay_repeats.cpp): the network tap recording this call as flows, or the record it is
    // timed from (an index into repeats_).
    std::uint32_t tap = FlowNetwork::no_tap;
    std::uint32_t recording = UINT32_MAX;  // while tapped: the record (of its key) it will replace
    std::uint32_t repeat = UINT32_MAX;
    bool repeat_committed = false;
    // A closed-form call timed from a record (replay_closed_records.cpp): the record (an index into
    // closed_records_), or, while the first call of its key is recorded, the key.
    std::uint32_t closed_record = UINT32_MAX;
    bool closed_recording = false;
    RepeatKey closed_key;
    std::size_t algorithm = 0;
    NcclProtocol protocol = NcclProtocol::simple;
    bool modelled_protocol = false;
    double predicted_us = 0;  // NCCL's own estimate of the call
    engine::Time first_arrival{-1};
    engine::Time last_arrival{};
    engine::Time end{};
};

}  // namespace clustersim::sim
