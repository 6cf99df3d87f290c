// Per-rank sweep over interval boundaries, link ranking, and the critical-path walk.
#include "sim/analysis.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <exception>
#include <limits>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/huge_pages.h"

namespace clustersim::sim {

using engine::Time;
using traces::OpKind;

namespace {
enum Track : int { compute_track, transfer_track, network_track, peer_track, dependency_track, tracks };

// A boundary packed into one integer that sorts as (time, track, delta): the time in the high bits, then the track
// (3 bits), then 1 for +1 and 0 for -1 (the makespan's own track, `tracks`, has no delta). Sorting 8-byte keys
// instead of 16-byte records under a three-way comparison.
constexpr int boundary_shift = 4;
constexpr std::int64_t max_boundary_time = std::numeric_limits<std::int64_t>::max() >> boundary_shift;

std::uint64_t boundary(Time at, int track, int delta) {
    return (static_cast<std::uint64_t>(at.count()) << boundary_shift) | (static_cast<std::uint64_t>(track) << 1) |
           (delta > 0 ? 1U : 0U);
}
}  // namespace

traces::RankBreakdown analyze_rank(const traces::OpGraph& g, const traces::Timeline& tl, traces::RankId rank,
                                   std::span<const traces::OpId> rank_ops) {
    // Times before 0 (a measured op that began before the iteration's start) count as 0: the sweep accrues time
    // from 0, so what precedes it only sets the tracks' counts, whatever its order.
    const auto check = [&](Time to) {
        if (to.count() > max_boundary_time)
            throw engine::InputError(fmt::format("rank {}: a span ends at {} ps, past what the analysis takes ({} ps)",
                                                 g.job_rank(rank), to.count(), max_boundary_time));
    };
    std::vector<std::uint64_t> b;
    Time last_end{0};
    auto add = [&](Time from, Time to, int track) {
        if (to <= from) return;
        check(to);
        b.push_back(boundary(std::max(from, Time{0}), track, +1));
        b.push_back(boundary(std::max(to, Time{0}), track, -1));
    };
    // (A rank's ops come in ascending order: each search of a contention or ready time starts where the last ended.)
    std::size_t contention_at = 0, wait_at = 0, start_at = 0;
    const auto contention = [&](traces::OpId id) { return tl.contention(id, contention_at); };
    const auto ready = [&](traces::OpId id, Time start) { return tl.ready(id, wait_at, start); };
    for (const traces::OpId id : rank_ops) {
        const traces::Op& op = g.ops[id.index()];
        const traces::OpTiming t = tl.timing(id, start_at);
        last_end = std::max(last_end, t.end);
        switch (op.kind) {
            case OpKind::compute:
                add(t.start, t.end, compute_track);
                break;
            case OpKind::collective:
                add(ready(id, t.start), t.start, peer_track);
                add(t.start, t.end, transfer_track);
                add(t.end - contention(id), t.end, network_track);
                break;
            case OpKind::send:
            case OpKind::recv:
                add(ready(id, t.start), t.start, dependency_track);
                add(t.start, t.end, transfer_track);
                add(t.end - contention(id), t.end, network_track);
                break;
            case OpKind::memcpy_h2d:
            case OpKind::memcpy_d2h:
                add(t.start, t.end, transfer_track);
                add(t.end - contention(id), t.end, network_track);
                break;
            case OpKind::alloc:
            case OpKind::free:
            case OpKind::delay:
                break;
        }
    }
    check(tl.makespan);
    b.push_back(boundary(std::max(tl.makespan, Time{0}), tracks, 0));
    std::sort(b.begin(), b.end());
    traces::RankBreakdown r;
    r.rank = g.job_rank(rank);
    r.iteration = tl.makespan;
    int active[tracks] = {};
    Time at{0};
    for (const std::uint64_t key : b) {
        const Time e_at{static_cast<std::int64_t>(key >> boundary_shift)};
        const int e_track = static_cast<int>((key >> 1) & 7U);
        const int e_delta = (key & 1U) ? +1 : -1;
        const Time dt = e_at - at;
        if (dt > Time{0}) {
            if (active[transfer_track] > 0) r.communication += dt;
            if (active[compute_track] > 0) {
                r.compute += dt;
                if (active[transfer_track] > 0) r.overlap += dt;
            } else if (active[transfer_track] > 0) {
                r.exposed_communication += dt;
                if (active[network_track] > 0) r.network_wait += dt;
            } else if (active[peer_track] > 0) {
                r.peer_wait += dt;
            } else if (active[dependency_track] > 0) {
                r.dependency_wait += dt;
            } else if (at >= last_end) {
                r.finished_early += dt;
            } else {
                r.idle_other += dt;
            }
            at = e_at;
        }
        if (e_track < tracks) active[e_track] += e_delta;
    }
    return r;
}

std::vector<traces::LinkReport> most_contended_links(const traces::Timeline& tl, std::size_t count) {
    std::vector<traces::LinkReport> links;
    for (const auto& c : tl.counters) {
        traces::LinkReport r{c.name, c.capacity, c.bytes, 0, 0, c.contention_delay_s};
        if (c.capacity > 0) r.peak_utilization = c.peak / c.capacity;
        if (c.capacity > 0 && tl.makespan > Time{0})
            r.mean_utilization = r.bytes / (c.capacity * engine::to_seconds(tl.makespan));
        links.push_back(std::move(r));
    }
    std::stable_sort(links.begin(), links.end(), [](const auto& a, const auto& b) {
        return a.contention_delay_s != b.contention_delay_s ? a.contention_delay_s > b.contention_delay_s
                                                            : a.bytes > b.bytes;
    });
    if (links.size() > count) links.resize(count);
    return links;
}

traces::CriticalPath critical_path(const traces::OpGraph& g, const traces::Timeline& tl) {
    traces::CriticalPath path;
    if (tl.size() == 0) return path;
    std::size_t last = 0;
    for (std::size_t i = 1; i < tl.size(); ++i) {
        if (tl.ends[i] > tl.ends[last]) last = i;
    }
    traces::OpId cur = traces::OpId::from_index(last);
    while (cur.valid()) {
        const traces::OpTiming t = tl.timing(cur);
        const traces::Op& op = g.ops[cur.index()];
        const traces::OpId pred = tl.critical_pred(cur);
        const Time pred_end = pred.valid() ? tl.ends[pred.index()] : Time{0};
        // A collective entered before its last member (its critical predecessor's rank) arrived: the time before
        // that arrival runs beside the predecessor, so the path counts the step from the predecessor's end. The
        // steps then add up to the makespan exactly.
        const Time from = std::max(t.start, pred_end);
        const Time busy = t.end - from;
        if (op.kind == OpKind::compute)
            path.compute += busy;
        else if (op.is_communication())
            path.communication += busy;
        else if (op.kind == OpKind::delay)
            path.waiting += busy;  // host time, not GPU work
        else
            path.copies += busy;
        path.steps.push_back({cur, from, t.end});
        path.waiting += from - pred_end;
        cur = pred;
    }
    std::reverse(path.steps.begin(), path.steps.end());
    return path;
}

traces::RunSummary summarize_run(const traces::OpGraph& g, const traces::Timeline& tl, unsigned threads) {
    traces::RunSummary s;
    s.makespan = tl.makespan;
    s.ops = g.ops.size();
    // Each rank's ops in op order, as one list by rank (CSR), each op as its gap from the rank's op before, in 2
    // bytes: a tensor-parallel group's ranks take turns, so a rank's next op is near. A rank's first op, and an op
    // 65,535 or more past the one before, are kept apart (`far`, by place). A worker decodes its rank's list into a
    // buffer of its own. (An op id per op, 4 bytes, was the run's peak: 142 MB of an unfolded GPT-3 iteration.)
    std::vector<std::uint32_t> offsets(g.rank_count + 1, 0);
    for (const traces::Op& op : g.ops) ++offsets[g.rank_of(op).index() + 1];
    for (std::uint32_t r = 0; r < g.rank_count; ++r) offsets[r + 1] += offsets[r];
    constexpr std::uint16_t far_gap = UINT16_MAX;
    std::vector<std::uint16_t> gaps;
    engine::assign_huge(gaps, g.ops.size(), std::uint16_t{0});
    std::vector<std::pair<std::uint32_t, std::uint32_t>> far;  // (place, op id), sorted by place below
    std::vector<std::uint32_t> fill(offsets.begin(), offsets.end() - 1), previous(g.rank_count, UINT32_MAX);
    for (std::uint32_t i = 0; i < g.ops.size(); ++i) {
        const std::size_t r = g.rank_of(g.ops[i]).index();
        const std::uint32_t place = fill[r]++;
        if (previous[r] == UINT32_MAX || i - previous[r] >= far_gap) {
            gaps[place] = far_gap;
            far.emplace_back(place, i);
        } else {
            gaps[place] = static_cast<std::uint16_t>(i - previous[r]);
        }
        previous[r] = i;
    }
    std::sort(far.begin(), far.end());
    // Ranks claimed in increasing order by up to `threads` workers, each written to its own slot. A worker stops at
    // its first error; every rank below the lowest failing one is still claimed, so that rank's error is the one
    // reported, whatever the threads' timing. (A thread that cannot be started leaves its share to the others.)
    s.ranks.resize(g.rank_count);
    const unsigned workers = std::max(1U, std::min<unsigned>(threads, g.rank_count / 64 + 1));
    std::vector<std::exception_ptr> errors(workers);
    std::vector<std::uint32_t> failed_rank(workers, UINT32_MAX);
    std::atomic<std::uint32_t> next_rank{0};
    const auto work = [&](unsigned k) {
        std::vector<traces::OpId> ops;  // the rank's ops, decoded
        for (;;) {
            const std::uint32_t r = next_rank.fetch_add(1);
            if (r >= g.rank_count) return;
            try {
                ops.clear();
                auto kept = std::lower_bound(far.begin(), far.end(), std::pair{offsets[r], std::uint32_t{0}});
                std::uint32_t id = 0;
                for (std::uint32_t place = offsets[r]; place < offsets[r + 1]; ++place) {
                    id = gaps[place] == far_gap ? (kept++)->second : id + gaps[place];
                    ops.push_back(traces::OpId{id});
                }
                s.ranks[r] = analyze_rank(g, tl, traces::RankId{r}, ops);
            } catch (...) {
                errors[k] = std::current_exception();
                failed_rank[k] = r;
                return;
            }
        }
    };
    std::vector<std::thread> pool;
    for (unsigned k = 1; k < workers; ++k) {
        try {
            pool.emplace_back(work, k);
        } catch (const std::system_error&) {
            break;
        }
    }
    work(0);
    for (std::thread& t : pool) t.join();
    const auto first = std::min_element(failed_rank.begin(), failed_rank.end());
    if (*first != UINT32_MAX) std::rethrow_exception(errors[static_cast<std::size_t>(first - failed_rank.begin())]);
    s.top_links = most_contended_links(tl, 10);
    s.critical_path = critical_path(g, tl);
    s.communication = communication_by_group(g, tl);
    s.cluster_events = tl.markers;
    return s;
}

std::string communicator_family(const std::string& name) {
    std::string family = name.substr(0, name.find('.'));
    while (family.size() > 1 && std::isdigit(static_cast<unsigned char>(family.back()))) family.pop_back();
    if (family.empty() || std::isdigit(static_cast<unsigned char>(family.front()))) family = name;
    return family;
}

std::vector<traces::GroupCommunication> communication_by_group(const traces::OpGraph& g, const traces::Timeline& tl) {
    // The family of each communicator, once; rows by family in first-seen order, sorted at the end.
    std::vector<std::uint32_t> row_of(g.comms.size());
    std::vector<traces::GroupCommunication> rows;
    for (std::size_t c = 0; c < g.comms.size(); ++c) {
        const std::string family = communicator_family(g.comms[c].name);
        auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.group == family; });
        if (it == rows.end()) it = rows.insert(rows.end(), traces::GroupCommunication{family});
        row_of[c] = static_cast<std::uint32_t>(it - rows.begin());
    }
    // (Ops in ascending order: each search of a ready time or a start starts at the last one found.)
    std::size_t wait_at = 0, start_at = 0;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const traces::Op& op = g.ops[i];
        if (!op.is_communication()) continue;
        traces::GroupCommunication& row = rows[row_of[op.comm().index()]];
        const traces::OpTiming t = tl.timing(traces::OpId::from_index(i), start_at);
        ++row.ops;
        row.bytes += op.bytes();
        row.waiting += t.start - tl.ready(traces::OpId::from_index(i), wait_at, t.start);
        row.transferring += t.end - t.start;
    }
    std::erase_if(rows, [](const auto& r) { return r.ops == 0; });
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        const Time ta = a.waiting + a.transferring, tb = b.waiting + b.transferring;
        return ta != tb ? ta > tb : a.group < b.group;
    });
    return rows;
}

}  // namespace clustersim::sim

namespace clustersim::sim {

std::vector<CollectiveComparison> compare_collectives(const traces::OpGraph& g, const traces::Timeline& tl) {
    std::vector<CollectiveComparison> rows;
    // (Ops in ascending order: each search of a ready time or a start starts at the last one found.)
    std::size_t wait_at = 0, start_at = 0;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const traces::Op& op = g.ops[i];
        if (op.kind != OpKind::collective || !g.has_duration(traces::OpId::from_index(i))) continue;
        auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.kind == op.collective; });
        if (it == rows.end()) {
            rows.push_back(CollectiveComparison{op.collective});
            it = rows.end() - 1;
        }
        const traces::OpTiming t = tl.timing(traces::OpId::from_index(i), start_at);
        ++it->calls;
        it->traced += g.durations[i];
        it->simulated_wait += t.start - tl.ready(traces::OpId::from_index(i), wait_at, t.start);
        it->simulated_transfer += t.end - t.start;
    }
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.kind < b.kind; });
    return rows;
}

}  // namespace clustersim::sim
