// Op readiness and completion, compute timing with the slowdown under communication, and the run loop.
#include "sim/replay/replay_engine.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/error.h"
#include "engine/hash.h"
#include "engine/log.h"
#include "engine/memory_budget.h"

namespace clustersim::sim {

using engine::Time;
using traces::OpId;
using traces::OpKind;
using traces::RankId;

void ReplayEngine::make_ready(OpId id) {
    const traces::Op& op = g_.ops[id.index()];
    stream_run_[op.stream.index()].current = id;
    switch (op.kind) {
        case OpKind::compute:
        case OpKind::delay:
            start_compute(id);
            break;
        case OpKind::collective:
            arrive_collective(id);
            break;
        case OpKind::send:
        case OpKind::recv:
            arrive_p2p(id);
            break;
        case OpKind::memcpy_h2d:
        case OpKind::memcpy_d2h:
            start_copy(id);
            break;
        case OpKind::alloc:
        case OpKind::free:
            start_slot(id) = sim_.now();  // (its trigger is its critical predecessor)
            done_queue_.push_back(id);
            break;
    }
}

void ReplayEngine::start_compute(OpId id) {
    const traces::Op& op = g_.ops[id.index()];
    start_slot(id) = sim_.now();  // (its trigger is its critical predecessor)
    const std::size_t s = op.stream.index();
    // A host delay is its recorded duration, never slowed: the GPU is idle on that stream.
    const bool delay = op.kind == OpKind::delay;
    // (The GPU's type from a by-rank array: its device record, read here for it, was a cache miss per kernel.)
    const RankId rank = stream_run_[s].rank;
    const std::uint32_t spec = rank_gpu_spec_[rank.index()];
    const Time work =
        delay ? std::max(Time{0}, g_.duration(id))
              : compute_time(g_, id, cluster_.gpu_specs()[spec], options_.compute, &gemm_efficiencies_, spec);
    StreamRun& run = stream_run_[s];
    run.remaining_ps = static_cast<double>(work.count());
    if (!delay && options_.variability.active()) run.remaining_ps *= work_factor(id);
    run.speed = delay ? 1.0 : compute_speed(rank);
    run.since = sim_.now();
    const auto ps = static_cast<std::int64_t>(std::ceil(run.remaining_ps / run.speed - 1e-6));
    ++rank_kernels_[rank.index()];
    sim_.arm(timer_of(s), sim_.now() + Time{ps}, to_u16(EventKind::compute_done));
}

void ReplayEngine::retime_computes(RankId rank) {
    if (rank_kernels_[rank.index()] == 0) return;
    const double speed = compute_speed(rank);
    for (std::uint32_t k = rank_stream_offsets_[rank.index()]; k < rank_stream_offsets_[rank.index() + 1]; ++k) {
        const std::size_t s = rank_streams_[k].index();
        StreamRun& run = stream_run_[s];
        // (The op's kind read last: a miss, where a stream's state is at hand.)
        if (!run.current.valid() || speed == run.speed || !sim_.armed(timer_of(s)) ||
            g_.ops[run.current.index()].kind != OpKind::compute)
            continue;
        run.remaining_ps -= static_cast<double>((sim_.now() - run.since).count()) * run.speed;
        run.remaining_ps = std::max(0.0, run.remaining_ps);
        run.speed = speed;
        run.since = sim_.now();
        const auto ps = static_cast<std::int64_t>(std::ceil(run.remaining_ps / speed - 1e-6));
        sim_.arm(timer_of(s), sim_.now() + Time{ps}, to_u16(EventKind::compute_done));
    }
}

void ReplayEngine::set_comm_active(RankId rank, int delta) {
    const int before = comm_active_[rank.index()];
    comm_active_[rank.index()] += delta;
    if ((before > 0) != (comm_active_[rank.index()] > 0) && options_.compute.slowdown_during_comm != 0)
        retime_computes(rank);
}

void ReplayEngine::complete(OpId id) {
    const traces::Op& op = g_.ops[id.index()];
    end_on_stream(id, op.stream.index());
    if (op.is_communication()) set_comm_active(rank_of(op), -1);
    release_dependents(id);
}

void ReplayEngine::end_on_stream(OpId id, std::size_t stream) {
    Time& slot = start_slot(id);
    const Time start = slot;
    slot = sim_.now();
    ended_[id.index() / 64] |= std::uint64_t{1} << (id.index() % 64);
    // The start said by the critical predecessor (set before the op ends, and ended before it started), or kept.
    const OpId pred = timeline_.critical_preds[id.index()];
    const bool said = pred.valid() ? ended(pred) && timeline_.ends[pred.index()] == start : start == Time{0};
    if (!said) timeline_.starts.emplace_back(id, start);
    stream_run_[stream].current = OpId::invalid();
    ++completed_;
}

void ReplayEngine::release_dependents(OpId id) {
    auto release = [&](OpId next) {
        if (g_.op_deps.has(next) && --dep_waiting_[g_.op_deps.owner_index(next)] != 0) return;
        timeline_.critical_preds[next.index()] = id;  // (its trigger)
        ready_queue_.push_back(next);
    };
    if (const OpId next = next_on_stream(id); next.valid()) release(next);
    if (!dependents_of_.contains(id.index())) return;
    const std::uint32_t owner = dependents_of_.rank(id.index());
    for (std::uint32_t k = owner_offsets_[owner]; k < owner_offsets_[owner + 1]; ++k) release(dependents_[k]);
}

void ReplayEngine::drain_ready() {
    // Work lists instead of recursion: a chain of zero-time ops never deepens the stack.
    std::size_t r = 0, d = 0;
    while (r < ready_queue_.size() || d < done_queue_.size()) {
        if (d < done_queue_.size()) {
            complete(done_queue_[d++]);
        } else {
            make_ready(ready_queue_[r++]);
        }
    }
    ready_queue_.clear();
    done_queue_.clear();
}

ReplayResult ReplayEngine::run() {
    const auto& starts = options_.rank_start;
    if (!starts.empty() && starts.size() != g_.rank_count)
        throw engine::InputError(engine::SourceLocation{g_.source},
                                 fmt::format("rank_start lists {} times for {} ranks", starts.size(), g_.rank_count));
    for (const OpId id : initially_ready_) {
        const std::uint32_t rank = rank_of(g_.ops[id.index()]).value;
        if (!starts.empty() && starts[rank] > Time{0})
            deferred_starts_.emplace_back(rank, id);
        else
            ready_queue_.push_back(id);
    }
    std::stable_sort(deferred_starts_.begin(), deferred_starts_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = 0; k < deferred_starts_.size(); ++k)
        if (k == 0 || deferred_starts_[k].first != deferred_starts_[k - 1].first)
            sim_.schedule_at(starts[deferred_starts_[k].first], to_u16(EventKind::rank_start),
                             deferred_starts_[k].first);
    drain_ready();
    const ProgressReporter progress = options_.progress;
    auto report = [&] {
        progress.report(progress.context,
                        ReplayProgress{completed_, g_.ops.size(), sim_.events_processed(), sim_.now()});
    };
    auto handler = [this, &progress, &report](const engine::Event& e) {
        if (progress.report && (sim_.events_processed() & ((1U << 16) - 1)) == 0) report();
        if (FlowNetwork::owns(e.kind)) {
            const auto event = net_.handle(e);
            for (std::size_t k = 0; k < event.flows.size(); ++k)
                event.arrived ? on_flow(event.flows[k], event.owners[k]) : on_drained(event.owners[k]);
        } else if (e.kind == to_u16(EventKind::modelled_done)) {
            finish_modelled(e.target);
        } else if (e.kind == to_u16(EventKind::rank_start)) {
            auto it = std::lower_bound(deferred_starts_.begin(), deferred_starts_.end(), e.target,
                                       [](const auto& d, std::uint32_t rank) { return d.first < rank; });
            for (; it != deferred_starts_.end() && it->first == e.target; ++it) ready_queue_.push_back(it->second);
        } else if (e.kind == to_u16(EventKind::cluster_event)) {
            apply_cluster_event(e.target);
        } else if (e.kind == to_u16(EventKind::closed_form_done)) {
            closed_member_done(e.target);
        } else if (e.kind == to_u16(EventKind::closed_form_commit)) {
            commit_closed_call(e.target);
        } else if (e.kind == to_u16(EventKind::repeat_done)) {
            repeat_member_done(e.target);
        } else if (e.kind == to_u16(EventKind::repeat_deadline)) {
            repeat_deadline(e.target);
        } else if (e.kind == to_u16(EventKind::repeat_failed)) {
            std::vector<std::uint32_t> calls = std::move(repeat_failures_);
            throw ClosedFormConflict{{},
                                     topo::LinkId{},
                                     fmt::format("{} call(s) arrived otherwise than recorded", calls.size()),
                                     std::move(calls)};
        } else if (e.kind == to_u16(EventKind::straggler_bound)) {
            straggler_bound(e.target);
        } else {
            CLUSTERSIM_CHECK(e.kind == to_u16(EventKind::compute_done), "unknown event kind {}", e.kind);
            // A kernel's end (complete() without reading the op: its stream is the timer's, and it does not
            // communicate).
            const std::uint32_t s = stream_of_timer(e.target);
            const OpId op = stream_run_[s].current;
            --rank_kernels_[stream_run_[s].rank.index()];
            prefetch_next_kernel_end();
            end_on_stream(op, s);
            release_dependents(op);
        }
        drain_ready();
    };
    try {
        sim_.run(handler);
    } catch (const FlowNetwork::LinkHeld& held) {
        const topo::Link& link = cluster_.link(held.link);
        closed_conflict({closed_link_comm_[held.link.index()]}, held.link,
                        fmt::format("a flow on {} -> {}, held by a call timed in closed form",
                                    cluster_.device(link.src).name, cluster_.device(link.dst).name));
    }
    if (completed_ != g_.ops.size()) throw engine::InputError(engine::SourceLocation{g_.source}, deadlock_report());

    ReplayResult result;
    for (const Time end : timeline_.ends) timeline_.makespan = std::max(timeline_.makespan, end);
    // Contentions (noted as each op ends) and ready times (as each starts) by op, each op's once.
    const auto by_op = [](std::vector<std::pair<OpId, Time>>& list, const char* what) {
        std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first.value < b.first.value; });
        CLUSTERSIM_CHECK(
            std::adjacent_find(list.begin(), list.end(),
                               [](const auto& a, const auto& b) { return a.first == b.first; }) == list.end(),
            "an op's {} noted twice", what);
    };
    by_op(timeline_.contentions, "contention");
    by_op(timeline_.waits, "ready time");
    by_op(timeline_.starts, "start");
    // Point-to-point transfers by arrival, then send: not in the order one instant's events happened to run.
    std::sort(timeline_.transfers.begin(), timeline_.transfers.end(),
              [](const auto& a, const auto& b) { return std::tie(a.end, a.send) < std::tie(b.end, b.send); });
    if (options_.network.record_link_utilization) {
        // Cross-site traffic: WAN links' bytes, and the bins in which any of them carried some.
        const LinkUtilization& used = net_.utilization();
        std::vector<std::uint8_t> busy;
        for (std::uint32_t l = 0; l < cluster_.links().size(); ++l) {
            if (cluster_.links()[l].kind != topo::LinkKind::wan || !used.carried(l)) continue;
            result.wan_bytes += used.bytes(l);
            const auto bins = used.bins(l);
            if (busy.size() < bins.size()) busy.resize(bins.size(), 0);
            for (std::size_t b = 0; b < bins.size(); ++b) busy[b] |= bins[b] > 0;
        }
        std::int64_t busy_bins = 0;
        for (const std::uint8_t b : busy) busy_bins += b;
        result.wan_busy = std::min(timeline_.makespan, Time{busy_bins * used.bin_width().count()});
    }
    if (options_.link_counters && options_.network.record_link_utilization) {
        const LinkUtilization& used = net_.utilization();
        std::vector<std::uint32_t> carried;  // the link of each counter
        for (std::uint32_t l = 0; l < cluster_.links().size(); ++l) {
            if (!used.carried(l)) continue;
            carried.push_back(l);
            const topo::Link& link = cluster_.links()[l];
            timeline_.counters.push_back(
                {fmt::format("{} -> {}", cluster_.device(link.src).name, cluster_.device(link.dst).name),
                 "GB/s",
                 link.bandwidth_bytes_per_s,
                 net_.contention_delay_s(topo::LinkId::from_index(l)),
                 used.bytes(l),
                 used.peak_rate(l),
                 {},
                 used.bin_width(),
                 {}});
        }
        // The rate over time only for the links the outputs may draw.
        for (const std::size_t c : traces::busiest_counters(timeline_.counters, options_.link_series)) {
            traces::CounterSeries& series = timeline_.counters[c];
            series.points = used.binned_steps(carried[c]);
            series.bins.assign(used.bins(carried[c]).begin(), used.bins(carried[c]).end());
        }
    }
    // Every op completed, so every call is done and its record filled in (its slot given back).
    CLUSTERSIM_CHECK(free_instances_.size() == instances_.size(), "{} collective call(s) still in flight at the end",
                     instances_.size() - free_instances_.size());
    result.collectives = std::move(call_records_);  // (no copy: a million records in a GPT-3 step)
    result.events = sim_.events_processed();
    result.flows = net_.flows_completed();
    result.rate_updates = net_.rate_updates();
    result.flows_reassigned = net_.flows_reassigned();
    result.flows_rerated = net_.flows_rerated();
    result.classes_formed = net_.classes_formed();
    result.flows_in_classes = net_.flows_in_classes();
    result.classes_split = net_.classes_split();
    result.bytes_on_network = net_.delivered_bytes();
    result.closed_form_calls = closed_calls_;
    result.closed_form_repeats = closed_repeats_;
    result.repeated_calls = repeated_calls_;
    result.call_records = static_cast<std::uint64_t>(
        std::count_if(repeats_.begin(), repeats_.end(), [](const RepeatRecord& r) { return r.recorded; }));
    // What the contention-aware network cost, for whoever asks why a run is slow (-v).
    engine::layer_log("sim").log(
        options_.nested ? spdlog::level::trace : spdlog::level::debug,
        "network: {} flows, {} events, {} rate updates, {:.1f} solver entities per update, {} rates changed, {} "
        "classes of {} flows ({} split), {} collective calls timed in closed form ({} of them from the records of "
        "earlier calls, {} records kept), {} from the records of earlier calls run as flows ({} records kept; {:.1f} "
        "MB of records), {} routes kept ({} with a choice of paths, by connection)",
        net_.flows_completed(), sim_.events_processed(), net_.rate_updates(),
        net_.rate_updates() ? static_cast<double>(net_.flows_reassigned()) / static_cast<double>(net_.rate_updates())
                            : 0.0,
        net_.flows_rerated(), net_.classes_formed(), net_.flows_in_classes(), net_.classes_split(), closed_calls_,
        closed_repeats_, closed_records_.size(), repeated_calls_, result.call_records,
        static_cast<double>(repeat_bytes_) / 1e6, kept_routes_.size(), keyed_routes_.size());
    result.timeline = std::move(timeline_);
    return result;
}

ReplayResult replay(const traces::OpGraph& graph, const topo::Cluster& cluster, const ReplayOptions& options) {
    const engine::MemoryScope scope(fmt::format("simulating {} ({} ranks, {} ops) on {}", graph.source,
                                                graph.rank_count, graph.ops.size(), cluster.description));
    // Calls timed in closed form that met other traffic after all: the run starts over with their
    // communicators' calls as flows, and every call on the link where they met; after a few such restarts, with
    // every call as flows.
    constexpr int max_restarts = 4;
    std::vector<std::uint8_t> as_flows(graph.comms.size(), 0), links(cluster.links().size(), 0), no_repeat;
    for (int restart = 0;; ++restart) {
        ReplayEngine engine(graph, cluster, options);
        engine.run_as_flows(as_flows, links, restart >= max_restarts, no_repeat);
        try {
            ReplayResult result = engine.run();
            result.closed_form_restarts = static_cast<std::uint32_t>(restart);
            return result;
        } catch (const ClosedFormConflict& conflict) {
            if (conflict.calls.empty())
                engine::layer_log("sim").log(options.nested ? spdlog::level::trace : spdlog::level::debug,
                                             "{}: starting over with the calls of {} communicator(s) as flows ({})",
                                             graph.source, conflict.comms.size(), conflict.what);
            else
                engine::layer_log("sim").log(options.nested ? spdlog::level::trace : spdlog::level::debug,
                                             "{}: starting over with {} call(s) as flows ({})", graph.source,
                                             conflict.calls.size(), conflict.what);
            if (conflict.link.valid()) links[conflict.link.index()] = 1;
            for (const std::uint32_t c : conflict.calls) {
                if (no_repeat.size() <= c) no_repeat.resize(c + 1, 0);
                no_repeat[c] = 1;
            }
            for (const std::uint32_t c : conflict.comms) {
                if (c < as_flows.size()) as_flows[c] = 1;
            }
        }
    }
}

}  // namespace clustersim::sim
