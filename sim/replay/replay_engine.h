// The replay's state machine (private to sim/): op readiness, stream occupancy, compute re-timing under
// communication, collective instances, point-to-point pairs, copies, and deadlock reporting.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/bit_rank.h"
#include "engine/flat_map.h"
#include "engine/hash.h"
#include "engine/simulator.h"
#include "sim/replay/call_instance.h"
#include "sim/replay/call_records.h"
#include "sim/replay/plan_cache.h"
#include "sim/replay/replay.h"
#include "sim/replay/transfer_states.h"

namespace clustersim::sim {

/// A call timed in closed form met other traffic on its links after all (ReplayEngine::run): the replay starts
/// over with these communicators' calls as flows (replay()).
struct ClosedFormConflict {
    std::vector<std::uint32_t> comms;
    topo::LinkId link;  // where (invalid: within one call)
    std::string what;
    std::vector<std::uint32_t> calls;  // calls timed from a record whose members arrived otherwise (replay_repeats.cpp)
};

class ReplayEngine {
public:
    ReplayEngine(const traces::OpGraph& graph, const topo::Cluster& cluster, const ReplayOptions& options);
    /// Before run(): the communicators and the links (by index, 1) whose calls run as flows (those of calls on
    /// such links), and whether every call does.
    void run_as_flows(const std::vector<std::uint8_t>& comms, const std::vector<std::uint8_t>& links, bool all,
                      const std::vector<std::uint8_t>& no_repeat = {});
    /// Throws ClosedFormConflict when a call timed in closed form turns out to share a link.
    ReplayResult run();

private:
    using Call = CollectiveCall;  // (call_instance.h)
    using Instance = CallInstance;
    /// Whether `slot` (may be null) holds a kept route of this epoch for `pair` (source << 32 | destination).
    [[nodiscard]] bool slot_serves(const SlotRoute* slot, std::uint64_t pair) const {
        return slot && slot->pair == pair && slot->epoch == routes_epoch_;
    }
    enum OwnerKind : std::uint32_t { owner_collective = 0, owner_p2p = 1, owner_copy = 2 };
    static constexpr std::uint32_t owner_shift = 30;

    void setup();  // (replay_setup.cpp)
    void make_ready(traces::OpId op);
    void start_compute(traces::OpId op);
    void arrive_collective(traces::OpId op);
    /// A member's transfers that waited only for its arrival start (in plan order), as flows.
    void member_arrived_as_flows(std::uint32_t instance, std::uint32_t member);
    void arrive_p2p(traces::OpId op);
    void start_copy(traces::OpId op);
    void plan_instance(std::uint32_t instance, const traces::Op& op);
    /// A member arriving now: the call's trigger (what its members' critical path steps to) is the trigger of the
    /// member that arrived last, and of several that arrive at one instant, of the lowest member, whatever order the
    /// instant's events run in (collectives timed in closed form end their members in another order than flows).
    void note_arrival_trigger(Instance& inst, std::uint32_t member, traces::OpId trigger) const {
        if (inst.arrived == 0 || sim_.now() > inst.last_arrival || member < inst.last_member) {
            inst.last_trigger = trigger;
            inst.last_member = member;
        }
    }
    [[nodiscard]] NcclTopologyInfo nccl_info(std::span<const topo::DeviceId> gpus);
    [[nodiscard]] double route_bottleneck(topo::DeviceId from, topo::DeviceId to);
    void arrive_modelled(traces::OpId op);
    struct ModelledCost {  // a modelled collective call's time and what the model chose
        engine::Time duration{};
        std::size_t algorithm = 0;
        NcclProtocol protocol = NcclProtocol::simple;
        bool modelled_protocol = false;
        double predicted_us = 0;
    };
    [[nodiscard]] ModelledCost modelled_cost(const traces::Op& op, traces::CommId comm);
    /// Whether a communicator's collectives are timed by a model rather than run as flows.
    [[nodiscard]] bool modelled(const traces::Communicator& comm) const {
        return comm.folded() || options_.collective_model == ReplayOptions::CollectiveModel::cost_model;
    }
    /// A collective the trace gives no size for but a kernel time: it keeps that time (the shortest member's, once
    /// every member has arrived), never a 0-byte transfer.
    [[nodiscard]] bool traced_only(traces::OpId id) const {
        return g_.ops[id.index()].bytes() == 0 && g_.has_duration(id);
    }
    [[nodiscard]] ModelledCost simulated_cost(const traces::Op& op, const traces::Communicator& comm);
    void finish_modelled(std::uint32_t instance);
    [[nodiscard]] double route_efficiency(std::span<const topo::LinkId> route) const;
    /// ReplayOptions::nccl_link_efficiency of a link (NVLink: its GPU's architecture unless forced).
    [[nodiscard]] double link_efficiency(const topo::Link& link) const;
    /// The NVLink efficiency of GPU `gpu`'s architecture, unless the options force one.
    [[nodiscard]] double nvlink_efficiency(topo::DeviceId gpu) const;
    /// Pipelining chunks of a tree, chain or NVLS call of `bytes` (ReplayOptions::tree_chunks).
    [[nodiscard]] std::uint32_t pipeline_chunks(std::uint64_t bytes, NcclProtocol protocol,
                                                std::uint32_t members) const;
    topo::DeviceId node_switch(topo::DeviceId gpu);
    /// A communicator's ring order and its rings per NIC on mesh nodes (CommSetup, worked out once).
    std::vector<std::uint32_t> find_ring_order(traces::CommId comm);
    std::vector<std::vector<std::uint32_t>> find_mesh_rings(traces::CommId comm);
    /// Starts a listed plan's transfer (a scheduled one starts in start_scheduled).
    void start_transfer(std::uint32_t instance, std::uint64_t transfer);
    /// Starts the flows of a transfer (one per channel path; their count goes to its in-flight record), and gives in
    /// `ideal` the longest one's duration on an empty network. `first_of_call`: it waits for no other transfer (pays
    /// the base latency).
    /// `slot_route`: the ring slot's kept route, read and updated (null: none).
    void start_flows(std::uint32_t instance, std::uint64_t transfer, const PlannedTransfer& x, bool first_of_call,
                     engine::Time& ideal, SlotRoute* slot_route = nullptr);
    struct CachedRoute;
    /// A free in-flight record for transfer `transfer` of `instance` (its flow counts still to set).
    std::uint32_t live_slot(std::uint32_t instance, std::uint64_t transfer);
    /// protocol_cost of a flow on the kept route `kept`, from `memo` when its last flow had the same bytes and flags.
    FlowCost memo_cost(CostMemo& memo, const Instance& inst, const PlannedTransfer& x, std::uint64_t bytes,
                       std::uint64_t channel_bytes, bool first_of_call, topo::DeviceId src, topo::DeviceId dst,
                       std::span<const topo::LinkId> route, const CachedRoute& kept);
    /// A flow's bytes on the wire and its latency beyond the route's, under the call's NCCL protocol (none: the
    /// transfer's bytes and no latency): `bytes` of the transfer go on `route`, `channel_bytes` of them in one
    /// channel (the slice a reducing receiver cannot hide). `kept`: the route's kept entry, if any.
    [[nodiscard]] FlowCost protocol_cost(const Instance& inst, const PlannedTransfer& x, std::uint64_t bytes,
                                         std::uint64_t channel_bytes, bool first_of_call, topo::DeviceId src,
                                         topo::DeviceId dst, std::span<const topo::LinkId> route,
                                         const CachedRoute* kept) const;
    /// A transfer's end on an empty network from when its dependencies would have ended and its own duration;
    /// updates the call's and its members' ideal ends.
    engine::Time ideal_end(Instance& inst, const PlannedTransfer& x, engine::Time ready_ideal, engine::Time ideal);
    /// A transfer's members' bookkeeping once it has arrived (its two ends: members, or switch_endpoint), and the
    /// call's end.
    void transfer_done(std::uint32_t instance, std::uint32_t src, std::uint32_t dst);
    // Ring schedules (replay_rings.cpp): the same steps as a listed plan, with state only for live transfers.
    void scheduled_member_arrived(std::uint32_t instance, std::uint32_t member);
    void scheduled_condition_met(std::uint32_t instance, const RingSchedule& ring, RingSchedule::At at);
    void start_scheduled(std::uint32_t instance, const RingSchedule& ring, RingSchedule::At at);
    /// The transfer's last flow has drained: the next send of its edge may go.
    void scheduled_drained(std::uint32_t instance, std::uint64_t transfer);
    void finish_scheduled(std::uint32_t instance, std::uint64_t transfer);
    /// Runs the planned ring call as one group of positions of its first ring on links standing for their orbits,
    /// when its rings are images of one another and each repeats under a shift by that group, as symmetries of the
    /// links its transfers use (replay_symmetry_fold.cpp); false (the plan untouched) if not.
    bool fold_by_symmetry(std::uint32_t instance);
    /// Keeps `links` as the route from src to dst (with flow key `key` when it is one of several paths) and returns
    /// its index in kept_routes_: route_once's routes, and a folded ring's last edge, kept on the route of the edge it
    /// stands for; `between_nodes` as the transfer crosses nodes.
    std::uint32_t keep_route_as(topo::DeviceId src, topo::DeviceId dst, std::uint64_t key,
                                std::span<const topo::LinkId> links, bool multipath, bool between_nodes);
    /// keyed_routes_'s key of a route with a choice of paths (the map's own empty key is all ones: a hash equal to
    /// it is stored as its neighbour).
    [[nodiscard]] static std::uint64_t keyed_route(std::uint64_t pair, std::uint64_t key) {
        const std::uint64_t keyed = engine::hash_combine(pair, key);
        return keyed == UINT64_MAX ? UINT64_MAX - 1 : keyed;
    }
    // Calls timed in closed form (replay_closed_form.cpp).
    /// Makes the planned call one timed in closed form if no other traffic is likely to share its links (from a
    /// record of its key, if there is one: replay_closed_records.cpp).
    bool try_closed_form(std::uint32_t instance, const traces::Op& op, std::uint32_t chunks);
    /// The closed-form state of a call that qualified: each transfer's conditions, the members' spans.
    void prepare_closed(std::uint32_t instance);
    /// Checks and marks a link a committed closed-form transfer uses from `start` to `drained`.
    void claim_closed_link(std::uint32_t instance, topo::LinkId link, engine::Time start, engine::Time drained);
    /// Claims a timed transfer's links and gives it to the network (times from `origin`).
    void commit_timed_transfer(std::uint32_t instance, const ClosedRecord::Transfer& x, engine::Time origin);
    void closed_member_arrived(std::uint32_t instance, std::uint32_t member);
    void closed_condition_met(std::uint32_t instance, std::uint64_t transfer, engine::Time at);
    /// Times the transfers whose conditions are all met, earliest first.
    void time_ready_transfers(std::uint32_t instance);
    /// What timing a transfer of a closed-form call reads: the transfer, its ends' devices, a ring edge's slot (its
    /// kept route and cost) and whether it waits for no other transfer.
    struct ClosedView {
        PlannedTransfer x;
        topo::DeviceId src, dst;
        SlotRoute* slot_route = nullptr;
        std::uint32_t slot = UINT32_MAX;
        bool first_of_call = false;
    };
    ClosedView closed_view(std::uint32_t instance, std::uint64_t transfer);
    /// Times a transfer into the call's staged ones and meets its dependents' conditions; false if one of its links
    /// still carries an earlier transfer of the call.
    bool stage_closed(std::uint32_t instance, std::uint64_t transfer);
    void commit_closed(std::uint32_t instance, const StagedTransfer& staged);
    /// Commits the transfers of the call timed at this instant (an event after the instant's arrivals).
    void commit_closed_call(std::uint32_t instance);
    /// A call whose first timing found its own transfers overlapping: run as flows instead.
    void closed_form_to_flows(std::uint32_t instance);
    void closed_member_done(std::uint32_t handle);
    /// A member's busy time in a closed-form call: the union of its transfers' spans.
    engine::Time closed_busy(std::uint32_t instance, std::uint32_t member);
    [[noreturn]] void closed_conflict(std::vector<std::uint32_t> comms, topo::LinkId link, std::string what) const;
    /// A closed-form record's transfers by link (ClosedRecord::links, spans), from its transfers.
    void group_by_link(ClosedRecord& record) const;
    /// Two calls in closed form on `link` at once (claim_closed_link's failure, out of its hot path).
    [[noreturn, gnu::noinline, gnu::cold]] void closed_link_conflict(std::uint32_t comm, topo::LinkId link) const;
    /// Schedules `member`'s end at `at` as an event of `kind` whose target is a handle into closed_done_.
    void schedule_member_end(std::uint32_t instance, std::uint32_t member, engine::Time at, EventKind kind);
    /// Allocates what closed forms and repeated calls keep by link (once).
    void allocate_held_links();
    // Repeated calls (replay_repeats.cpp).
    /// After planning a call that is not timed in closed form: times it from the record of an earlier call like it
    /// if that record's arrivals were seen twice and its links are free now, or else records it.
    void plan_repeat(std::uint32_t instance, const traces::Op& op, std::uint32_t chunks);
    /// A member of a call timed from a record arrived: checked against the record; the last commits the call.
    void repeat_member_arrived(std::uint32_t instance, std::uint32_t member);
    /// Each member's end as an event, the links' record.
    void commit_repeat(std::uint32_t instance);
    /// Just after the record's last arrival: a call not committed by then had a member arrive otherwise.
    void repeat_deadline(std::uint32_t call);
    /// A call timed from a record whose members arrive otherwise: the replay starts over with it as flows, at the
    /// end of this instant (with every other such call found at it).
    void repeat_failed(std::uint32_t instance);
    void repeat_member_done(std::uint32_t handle);
    /// Keeps the record of a recorded call that is done, if nothing else shared its links.
    void close_recording(std::uint32_t instance);
    // Closed-form calls timed from records (replay_closed_records.cpp).
    /// The record of the call's key, if its links qualify now: the call then holds them and is timed from it.
    bool use_closed_record(std::uint32_t instance, const RepeatKey& key);
    /// A member of a call to be timed from a record arrived: the instant's commit is scheduled where the closed
    /// form would schedule it (once a ring's first-step transfer has both its ends).
    void closed_record_arrived(std::uint32_t instance, std::uint32_t member);
    /// At the commit: every member in at this instant, the record's commit; else the closed form from the arrivals.
    void commit_closed_record(std::uint32_t instance);
    /// Keeps the commit of a closed-form call being recorded (staged: this instant's transfers).
    void record_closed_commit(std::uint32_t instance, const std::vector<StagedTransfer>& staged);
    struct RouteView {
        std::span<const topo::LinkId> links;  // valid until the next route_once
        bool multipath = false;               // there was a choice of paths
        const CachedRoute* kept = nullptr;  // a kept route's entry (efficiency, cost), valid until the next route_once
    };
    /// The route from src to dst (flow key `key` picks among equal-cost paths). Routes without a choice are kept
    /// by (src, dst) in single_routes_, the others by (src, dst, key) in keyed_routes_ (flow keys are per
    /// connection, so they repeat); past max_cached_routes, routes are routed into `out`.
    /// ECMP by connection (models.md): the flow key of every transfer on one connection, from the communicator
    /// (a collective's id, or a hash that keeps a rank's sends apart from its collectives) and the two ends. NCCL
    /// opens a connection once per communicator and its path stays, so its transfers take one path.
    static std::uint64_t connection_key(std::uint64_t comm, std::uint32_t from, std::uint32_t to) {
        return engine::hash_combine(engine::hash_combine(comm, from), to);
    }
    /// Whether kept_routes_[index] is the route route_once would give for (pair, key).
    [[nodiscard]] bool hint_serves(std::uint32_t index, std::uint64_t pair, std::uint64_t key) const {
        if (index >= kept_routes_.size() || kept_routes_[index].pair != pair) return false;
        return !kept_routes_[index].multipath || kept_routes_[index].key == key;
    }
    /// Whether kept route `index` is the one routed for (pair, key) with a choice of paths (keyed_routes_ holds
    /// hashes, so a hit is checked; so is a guess, such as a connection's next channel).
    [[nodiscard]] bool kept_for(std::uint32_t index, std::uint64_t pair, std::uint64_t key) const {
        return hint_serves(index, pair, key) && kept_routes_[index].multipath;
    }
    RouteView route_once(topo::DeviceId src, topo::DeviceId dst, std::uint64_t key, std::vector<topo::LinkId>& out,
                         SlotRoute* slot_route = nullptr);
    void finish_transfer(std::uint32_t instance, std::uint64_t transfer);
    void finish_member(std::uint32_t instance, std::uint32_t member);
    /// A flow (of owner `owner`, as the network's event gives it) arrived, or drained (only its owner is read).
    void on_flow(FlowId flow, std::uint32_t owner);
    void on_drained(std::uint32_t owner);
    /// An op's end: its time, its stream free, its dependents released.
    void complete(traces::OpId op);
    void end_on_stream(traces::OpId op, std::size_t stream);
    void release_dependents(traces::OpId op);
    /// If the next event is a kernel's end too (ranks in step end theirs together), fetches that op's state and
    /// timing into the cache while this one is handled: its end reads them first, cold since the op started.
    void prefetch_next_kernel_end() const {
        std::uint32_t target = 0;
        std::uint16_t kind = 0;
        if (!sim_.next_event(target, kind) || kind != to_u16(EventKind::compute_done)) return;
        const traces::OpId next = stream_run_[stream_of_timer(target)].current;
        if (!next.valid()) return;
        __builtin_prefetch(&next_gap_[next.index()]);
        __builtin_prefetch(&timeline_.ends[next.index()]);
    }
    void drain_ready();
    void set_comm_active(traces::RankId rank, int delta);
    void setup_stragglers();
    /// Compute speed of a stream of `rank` now: slowed under communication and by timed stragglers.
    [[nodiscard]] double compute_speed(traces::RankId rank) const;
    /// Jitter and the untimed stragglers of its iteration: how much longer kernel `op` takes than modelled.
    [[nodiscard]] double work_factor(traces::OpId op) const;
    void straggler_bound(std::uint32_t target);
    void apply_cluster_event(std::uint32_t index);
    /// What a flow owner is, for errors: the transfer, its call and ranks, or the op.
    [[nodiscard]] std::string describe_owner(std::uint32_t owner) const;
    void retime_computes(traces::RankId rank);
    [[nodiscard]] topo::DeviceId gpu_of(traces::RankId rank) const { return rank_gpu_[rank.index()]; }
    [[nodiscard]] std::string deadlock_report() const;

    const traces::OpGraph& g_;
    const topo::Cluster& cluster_;
    const ReplayOptions& options_;
    engine::Simulator sim_;
    FlowNetwork net_;
    traces::Timeline timeline_;
    GemmEfficiencies gemm_efficiencies_;  // by GPU type and GEMM shape, computed once

    std::vector<topo::DeviceId> rank_gpu_;
    std::vector<std::uint32_t> rank_gpu_spec_;  // by rank: its GPU's type (Cluster::gpu_specs), read by every kernel
    std::vector<topo::DeviceId> rank_host_;
    /// The rank `op` runs on, from its stream's run state (at hand where the op starts or ends; the graph's
    /// rank_of reads its list of streams).
    [[nodiscard]] traces::RankId rank_of(const traces::Op& op) const { return stream_run_[op.stream.index()].rank; }
    /// While an op runs, its slot of Timeline::ends holds its start: end_on_stream() writes its end there, and keeps
    /// the start in Timeline::starts when it is not the end of the op's critical predecessor.
    [[nodiscard]] engine::Time& start_slot(traces::OpId op) { return timeline_.ends[op.index()]; }
    /// By op, a bit: whether it ended (its slot of Timeline::ends is its end, no longer its start).
    std::vector<std::uint64_t> ended_;
    [[nodiscard]] bool ended(traces::OpId op) const { return (ended_[op.index() / 64] >> (op.index() % 64)) & 1; }
    /// By op: how many ops ahead the next op of its stream is (0: none; far_gap: kept in far_next_, by op). The
    /// only run state every op has, in 2 bytes: ranks' ops come in short runs (a tensor-parallel group's side by
    /// side), so a stream's next op is near; in an unfolded GPT-3 iteration, never 65,535 ops or more ahead.
    std::vector<std::uint16_t> next_gap_;
    engine::FlatMap64<std::uint32_t> far_next_;
    static constexpr std::uint16_t far_gap = UINT16_MAX;
    /// The next op on `op`'s stream (invalid for a stream's last).
    [[nodiscard]] traces::OpId next_on_stream(traces::OpId op) {
        const std::uint16_t gap = next_gap_[op.index()];
        if (gap == 0) return traces::OpId::invalid();
        return traces::OpId{gap != far_gap ? op.value + gap : *far_next_.find(op.value)};
    }
    /// The communication ops (collective, send, recv), and by each (its rank there) its partner: a send's recv and
    /// a recv's send (UINT32_MAX: unmatched), a collective op's call. (In a record for every op it was 4 bytes an
    /// op, for the 29% of an unfolded GPT-3 step's ops that communicate.)
    engine::BitRank comm_ops_;
    std::vector<std::uint32_t> partners_;
    [[nodiscard]] std::uint32_t& partner(traces::OpId op) { return partners_[comm_ops_.rank(op.index())]; }
    [[nodiscard]] std::uint32_t partner(traces::OpId op) const { return partners_[comm_ops_.rank(op.index())]; }
    /// By op with dependencies besides stream order (its place in the graph's OpDeps): its unmet predecessors,
    /// those and its stream predecessor. An op without is released by its stream predecessor alone. (A count for
    /// every op was 4 bytes an op, for the 1.1 M of the 35 M ops of an unfolded GPT-3 step that have some.)
    std::vector<std::uint32_t> dep_waiting_;
    /// The ops ready at the start, by id: the first op of each stream, when it has no dependencies.
    std::vector<traces::OpId> initially_ready_;
    /// The op whose end released `op` (invalid for an op ready at the start), until the op starts: then, the op
    /// its start is attributed to (see Timeline::critical_preds).
    [[nodiscard]] traces::OpId trigger(traces::OpId op) const { return timeline_.critical_preds[op.index()]; }
    /// A rank's communicators with its place in each (CSR by rank, by communicator within a rank), built by
    /// index_rank_comms (replay_calls.cpp).
    void index_rank_comms();
    std::vector<std::uint32_t> rank_comm_offsets_;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> rank_comms_;  // (communicator, member index)
    /// Records an op's contention (Timeline::contentions): kept only when positive; sorted by op when the run ends.
    void note_contention(traces::OpId op, engine::Time contention) {
        if (contention > engine::Time{0}) timeline_.contentions.emplace_back(op, contention);
    }
    /// Records when an op was ready (Timeline::waits): kept only when before its start; sorted when the run ends.
    void note_ready(traces::OpId op, engine::Time ready, engine::Time start) {
        if (ready < start) timeline_.waits.emplace_back(op, ready);
    }
    /// The place of `rank` in `comm` (a member: checked by the graph's validation).
    [[nodiscard]] std::uint32_t member_of(traces::RankId rank, traces::CommId comm) const;
    // The dependents besides stream order (CSR) of the ops that have some: op `o` is in dependents_of_, and its list
    // is dependents_[owner_offsets_[k], owner_offsets_[k + 1]) for k = dependents_of_.rank(o). (An offset for every
    // op was 4 bytes an op, 142 MB of an unfolded GPT-3 step, for 1.1 M dependencies among 35 M ops.)
    engine::BitRank dependents_of_;
    std::vector<std::uint32_t> owner_offsets_;
    std::vector<traces::OpId> dependents_;
    // Messages' sides waiting for the other, by op id (only looked up, never iterated): a posted send or recv
    // waiting for its partner, or an eager recv for the data, with when it was ready; an eager send whose data
    // arrived before its recv was posted.
    engine::FlatMap64<engine::Time> p2p_posted_;
    engine::FlatMap64<std::uint8_t> p2p_arrived_;
    std::vector<Call> calls_;                     // by call (the partner of a collective op)
    std::vector<CollectiveRecord> call_records_;  // by call: what the outputs keep of it (moved out at the end)
    std::vector<Instance> instances_;             // by slot: calls in flight
    std::vector<std::uint32_t> free_instances_;
    /// The call's in-flight state (a slot, set up on its first member's arrival).
    std::uint32_t instance_of(std::uint32_t call);
    /// Records a call whose transfers are done and whose members have all arrived, and frees its slot.
    void release_instance(std::uint32_t index);
    /// Resets a released call's state (small buffers keep their capacity).
    void reset_instance(Instance& inst);
    std::vector<std::uint32_t> rank_stream_offsets_;  // streams of each rank (CSR)
    std::vector<traces::StreamId> rank_streams_;
    /// A stream's run state in one record: an op's readiness, its kernel's start and end, and a retime read and write
    /// it together, and with tens of thousands of streams each array of it was a cache miss of its own.
    struct StreamRun {
        traces::OpId current;     // the op occupying the stream
        traces::RankId rank;      // the stream's
        double remaining_ps = 0;  // full-speed work left in the current compute op
        double speed = 1;         // the rate that work goes at
        engine::Time since{0};    // since when
    };
    static_assert(sizeof(StreamRun) == 32);
    std::vector<StreamRun> stream_run_;  // by stream
    /// The streams' kernel-end timers, made one after the other in stream order: stream s has timer
    /// first_stream_timer_ + s.
    engine::TimerId first_stream_timer_ = 0;
    [[nodiscard]] engine::TimerId timer_of(std::size_t stream) const {
        return first_stream_timer_ + static_cast<engine::TimerId>(stream);
    }
    [[nodiscard]] std::uint32_t stream_of_timer(engine::TimerId timer) const { return timer - first_stream_timer_; }
    /// By rank: its kernels in progress (compute ops and host delays), so that a rank with none is not retimed when
    /// its communication starts or ends (reading its streams' records was 3% of the first-level misses at 4,096 GPUs).
    std::vector<std::uint32_t> rank_kernels_;
    std::vector<int> comm_active_;                  // by rank
    std::vector<double> rank_slowdown_;             // by rank: product of the timed stragglers' slowdowns in effect
    std::vector<std::uint32_t> straggler_offsets_;  // by rank (CSR): the stragglers naming it
    std::vector<std::uint32_t> rank_stragglers_;
    std::vector<std::vector<std::uint32_t>> straggler_ranks_;              // by straggler: the simulated ranks it slows
    std::vector<std::pair<std::uint32_t, traces::OpId>> deferred_starts_;  // (rank, op) ready at the rank's start
    std::vector<std::vector<topo::LinkId>> channel_routes_;                // scratch of start_transfer
    std::vector<std::uint32_t> channel_kept_;  // by channel: its route's index in kept_routes_ (UINT32_MAX: none)
    struct ChannelPath {                       // start_flows' scratch, by channel
        std::span<const topo::LinkId> route;
        std::uint64_t hash = 0;    // of the route (routes compared link by link only when equal)
        std::uint32_t first = 0;   // the first channel on the same route: the flow it merges into
        std::uint64_t bytes = 0;   // a first channel's: the shares of the channels merged into it
        std::uint32_t weight = 0;  // and how many they are
    };
    std::vector<ChannelPath> channel_paths_;
    std::vector<topo::LinkId> route_scratch_;
    // Single-path routes by (source << 32 | destination): offset and length in route_pool_, with what starting a
    // flow on one reads of its links (so that a transfer's start touches this entry only); looked up, never
    // iterated. Cleared when a link's state changes (the router then routes around it).
    // Two cache lines, aligned: the first holds what a transfer's start checks and reads (ends, key, links, cost),
    // the second its cost memo (an entry straddling three lines cost a miss more per channel started).
    struct alignas(64) CachedRoute {
        std::uint64_t pair = 0;  // (src << 32 | dst)
        std::uint64_t key = 0;   // the flow key that picked it (multipath only)
        std::uint32_t offset = 0;
        std::uint32_t length = 0;
        std::uint64_t hash = 0;       // route_hash of its links (start_flows compares channels' routes by it first)
        FlowNetwork::RouteCost cost;  // latency and bottleneck
        bool multipath = false;       // one of several equal-cost paths, picked by `key`
        bool between_nodes = false;   // source and destination in different nodes
        bool nvlink_first = false;    // its first link is NVLink
        // A connection's first channel's entry: which channel each of its `merged_channels` (0: not found yet, at
        // most 8, in the line's padding) merges into, 4 bits each; found once they were kept side by side after it.
        std::uint8_t merged_channels = 0;
        std::uint32_t channel_firsts = 0;
        static constexpr std::uint32_t most_merged_channels = 8;
        double efficiency = 1;  // route_efficiency
        CostMemo memo;          // the last flow's cost on it
    };
    static_assert(sizeof(CachedRoute) == 128 && offsetof(CachedRoute, efficiency) == 64);  // (the merges in line one)
    /// A hash of a route's links, in order (equal routes, equal hashes).
    [[nodiscard]] static std::uint64_t route_hash(std::span<const topo::LinkId> route) {
        std::uint64_t hash = 0;
        for (const topo::LinkId l : route) hash = hash * 0x9e3779b97f4a7c15ULL + l.value;
        return hash;
    }
    std::vector<CachedRoute> kept_routes_;
    /// By link: the link that stands for it in a call folded by symmetry (fold_by_symmetry; empty: none), applied to
    /// every route route_once computes.
    std::vector<topo::LinkId> link_alias_;
    /// The folded call runs a ring's first positions as a ring of their own, whose last edge is kept on another
    /// edge's route (no closed form: it routes edges afresh).
    bool shift_folded_ = false;
    engine::FlatMap64<std::uint32_t> single_routes_;  // (src << 32 | dst) -> index in kept_routes_
    engine::FlatMap64<std::uint32_t> keyed_routes_;   // multipath: hash of (pair, key) -> index in kept_routes_
    std::uint32_t routes_epoch_ = 0;                  // counts the clearings of the kept routes
    std::vector<topo::LinkId> route_pool_;
    static constexpr std::size_t max_cached_routes = 1 << 20;
    std::vector<double> link_load_scratch_;  // by link: bytes of a modelled all-to-all crossing it
    std::vector<topo::LinkId> touched_scratch_;
    std::vector<topo::DeviceId> gpu_scratch_;  // a call's members' GPUs, for NCCL's tuner
    const std::size_t tree_algorithm_ = *find_collective_algorithm("double_tree");
    const std::size_t nvls_algorithm_ = *find_collective_algorithm("nvls");
    const std::size_t ring_algorithm_ = *find_collective_algorithm("ring");
    std::vector<std::pair<topo::DeviceId, topo::DeviceId>> switch_of_;  // GPU -> its NVSwitch, sorted
    // Modelled collectives' costs by (communicator, kind, bytes), sorted.
    std::vector<std::pair<std::array<std::uint64_t, 3>, ModelledCost>> modelled_costs_;
    /// What every call of a communicator plans from, worked out on its first call (replay_collectives.cpp): its
    /// members' nodes and GPUs, its ring order, its rings per NIC, and NCCL's view of them. A GPT-3 iteration on
    /// 1,024 GPUs makes 1.2 M calls on 2,176 communicators; each used to find most of these again.
    struct CommSetup {
        bool ready = false;
        bool one_node = false;          // every member on one node
        bool switch_reduction = false;  // ... an NVSwitch node whose switch can reduce (Hopper and later)
        bool switched_nodes = false;    // every member's GPU cabled to an NVSwitch
        bool cabled = false;            // some member's GPU relays (direct GPU-to-GPU cables)
        bool has_info = false;          // `info` worked out (on the first call that asks NCCL's tuner)
        std::vector<std::uint32_t> node_of;
        std::vector<std::uint32_t> ring_order;                  // find_ring_order
        std::vector<std::vector<std::uint32_t>> channel_rings;  // find_mesh_rings (mesh nodes only)
        NcclTopologyInfo info;
    };
    std::vector<CommSetup> comm_setups_;  // by communicator
    PlanRequest plan_request_;            // plan_instance's (its vectors keep their capacity between calls)
    PlanCache plan_cache_;                // listed plans of calls that repeat, with their arrays
    CommSetup& comm_setup(traces::CommId comm);
    /// A transfer in flight, by the owner slot its flows carry: what its flows' events read first (and, most of the
    /// time, only: the transfer's other state is looked up when its last flow has drained or arrived).
    struct LiveTransfer {
        std::uint32_t instance = 0;
        std::uint32_t flows_unsent = 0;  // its flows not yet drained
        std::uint64_t transfer = 0;
        std::uint32_t flows_left = 0;  // its flows not yet arrived
    };
    std::vector<LiveTransfer> live_transfers_;
    std::vector<std::uint32_t> free_live_;
    // Closed forms: whether calls may be timed so, and which communicators' calls may not; by link, when the
    // transfers timed on it last drained and their communicator (or the one holding it); transfers ready to be
    // timed as (ready time, transfer), a min-heap; members' ends scheduled, by event target (instance, member).
    bool closed_form_ = false;
    std::vector<std::uint8_t> flows_only_;
    std::vector<std::uint8_t> flows_only_links_;
    std::vector<engine::Time> closed_busy_until_;
    std::vector<std::uint32_t> closed_link_comm_;
    std::vector<std::pair<engine::Time, std::uint64_t>> closed_ready_;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> closed_done_;
    std::vector<std::uint32_t> free_closed_done_;
    std::vector<std::uint32_t> link_stamp_;
    std::vector<engine::Time> stage_drained_;  // by link: when the last transfer staged on it leaves
    std::vector<std::uint32_t> stage_call_;    // by link: that transfer's call
    std::uint32_t stamp_ = 0;
    std::uint64_t closed_calls_ = 0;
    // Repeated calls: the records, by communicator the indices of its records, and the calls timed from them.
    std::vector<RepeatRecord> repeats_;
    std::vector<std::vector<std::uint32_t>> comm_repeats_;
    std::uint64_t repeated_calls_ = 0;
    std::vector<ClosedRecord> closed_records_;  // closed-form records, by communicator their keys and indices
    struct KeptClosedRecord {                   // (the key beside the index: a lookup reads one short list)
        RepeatKey key;
        std::uint32_t record = 0;
    };
    std::vector<std::vector<KeptClosedRecord>> comm_closed_records_;
    std::uint64_t closed_repeats_ = 0;     // closed-form calls timed from a record
    bool repeats_on_ = false;              // ReplayOptions::repeat_calls, where the run allows it (run_as_flows)
    std::vector<std::uint8_t> no_repeat_;  // by call: one that arrived otherwise than its record in an earlier run
    std::vector<std::uint32_t> repeat_failures_;  // calls found arriving otherwise than their records at this instant
    std::size_t repeat_bytes_ = 0;                // what the records keep, bounded by max_repeat_bytes
    static constexpr std::size_t max_repeat_bytes = std::size_t{256} << 20;
    std::vector<traces::OpId> ready_queue_;
    std::vector<traces::OpId> done_queue_;
    std::uint64_t completed_ = 0;
};

}  // namespace clustersim::sim
