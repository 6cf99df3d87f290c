// What the cluster does to a replay: stragglers (slow ranks, in time windows or iterations), per-kernel jitter, and
// the timed events of system.events (links changing, GPUs failing).
#include <algorithm>

#include <fmt/format.h>

#include "engine/error.h"
#include "sim/replay/replay_engine.h"

namespace clustersim::sim {

using engine::Time;
using traces::OpId;
using traces::OpKind;
using traces::RankId;

void ReplayEngine::setup_stragglers() {
    rank_slowdown_.assign(g_.rank_count, 1.0);
    const auto& stragglers = options_.variability.stragglers;
    straggler_offsets_.assign(g_.rank_count + 1, 0);
    if (stragglers.empty()) return;
    // Job rank -> simulated rank.
    std::vector<std::uint32_t> simulated(g_.job_size(), UINT32_MAX);
    for (std::uint32_t r = 0; r < g_.rank_count; ++r) simulated[g_.job_rank(RankId{r})] = r;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;  // (simulated rank, straggler)
    straggler_ranks_.assign(stragglers.size(), {});
    for (std::uint32_t k = 0; k < stragglers.size(); ++k) {
        const Straggler& st = stragglers[k];
        std::vector<std::uint32_t>& ranks = straggler_ranks_[k];  // simulated ranks
        for (const std::uint32_t job_rank : st.ranks) {
            if (job_rank >= simulated.size())
                throw engine::InputError(
                    st.where, fmt::format("rank {} does not exist (the job has {} ranks)", job_rank, simulated.size()));
            if (simulated[job_rank] == UINT32_MAX)
                throw engine::InputError(
                    st.where,
                    fmt::format("rank {} is not simulated (symmetry reduction stands it in for others): a straggler "
                                "breaks the symmetry; simulate every rank",
                                job_rank));
            ranks.push_back(simulated[job_rank]);
        }
        // Named by GPU: the simulated rank on each.
        for (const std::uint32_t gpu : st.gpus) {
            if (gpu >= cluster_.gpus().size())
                throw engine::InputError(st.where, fmt::format("GPU {} does not exist (the topology has {} GPUs)", gpu,
                                                               cluster_.gpus().size()));
            const auto on = std::find(rank_gpu_.begin(), rank_gpu_.end(), cluster_.gpus()[gpu]);
            if (on == rank_gpu_.end())
                throw engine::InputError(st.where, fmt::format("GPU {} runs no simulated rank", gpu));
            ranks.push_back(static_cast<std::uint32_t>(on - rank_gpu_.begin()));
        }
        for (const std::uint32_t r : ranks) pairs.emplace_back(r, k);
        if (st.timed()) {
            if (st.from > Time{0}) sim_.schedule_at(st.from, to_u16(EventKind::straggler_bound), 2 * k);
            if (st.until != engine::max_time) sim_.schedule_at(st.until, to_u16(EventKind::straggler_bound), 2 * k + 1);
            if (st.from == Time{0})
                for (const std::uint32_t r : ranks) rank_slowdown_[r] *= st.slowdown;
        }
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    for (const auto& [rank, k] : pairs) ++straggler_offsets_[rank + 1];
    for (std::size_t r = 0; r < g_.rank_count; ++r) straggler_offsets_[r + 1] += straggler_offsets_[r];
    for (const auto& [rank, k] : pairs) rank_stragglers_.push_back(k);  // sorted by rank: CSR order
}

double ReplayEngine::compute_speed(RankId rank) const {
    const double comm = comm_active_[rank.index()] > 0 ? 1.0 / (1.0 + options_.compute.slowdown_during_comm) : 1.0;
    return comm / rank_slowdown_[rank.index()];
}

double ReplayEngine::work_factor(OpId id) const {
    const Variability& v = options_.variability;
    double factor = v.jitter.active() ? jitter_factor(v.jitter, v.seed, id.value) : 1.0;
    const RankId rank = rank_of(g_.ops[id.index()]);
    for (std::uint32_t k = straggler_offsets_[rank.index()]; k < straggler_offsets_[rank.index() + 1]; ++k) {
        const Straggler& st = v.stragglers[rank_stragglers_[k]];
        if (!st.timed() && st.in_iteration(g_.iteration_of(id))) factor *= st.slowdown;
    }
    return factor;
}

void ReplayEngine::straggler_bound(std::uint32_t target) {
    // A window opens or closes: recompute the timed slowdown of each rank it names, then re-time their kernels.
    const auto& stragglers = options_.variability.stragglers;
    for (const std::uint32_t r : straggler_ranks_[target / 2]) {
        const RankId rank{r};
        double slowdown = 1;
        for (std::uint32_t k = straggler_offsets_[rank.index()]; k < straggler_offsets_[rank.index() + 1]; ++k) {
            const Straggler& st = stragglers[rank_stragglers_[k]];
            if (st.timed() && st.from <= sim_.now() && sim_.now() < st.until) slowdown *= st.slowdown;
        }
        rank_slowdown_[rank.index()] = slowdown;
        retime_computes(rank);
    }
}

void ReplayEngine::apply_cluster_event(std::uint32_t index) {
    const ClusterEvent& ev = options_.cluster_events[index];
    if (completed_ == g_.ops.size()) return;  // after the job's end: nothing left to change
    timeline_.markers.push_back({sim_.now(), ev.label});
    if (ev.kind == ClusterEvent::Kind::links) {
        for (const topo::LinkId l : ev.links) net_.set_link_state(l, ev.factor, ev.label);
        single_routes_.clear();  // routes may go around the link now, or over it again
        keyed_routes_.clear();
        kept_routes_.clear();
        route_pool_.clear();
        ++routes_epoch_;
        for (CommSetup& setup : comm_setups_) setup.has_info = false;  // (NCCL's view reads the routes' bottlenecks)
        return;
    }
    // A GPU fails: fatal if a rank on it still has work (the others would wait for it forever).
    const topo::DeviceId gpu = cluster_.gpus()[ev.gpu];
    for (std::uint32_t r = 0; r < g_.rank_count; ++r) {
        if (rank_gpu_[r] != gpu) continue;
        std::string doing;
        for (std::uint32_t k = rank_stream_offsets_[r]; k < rank_stream_offsets_[r + 1]; ++k) {
            const OpId current = stream_run_[rank_streams_[k].index()].current;
            if (current.valid()) doing += (doing.empty() ? "" : ", ") + g_.describe(current);
        }
        std::uint64_t left = 0;
        for (std::size_t i = 0; i < g_.ops.size(); ++i)
            left += g_.rank_of(OpId::from_index(i)).value == r && !ended(OpId::from_index(i));
        if (left == 0) return;
        throw engine::InputError(
            ev.where, fmt::format("at {}: {}: rank {} had {} ops left{}; synchronous training cannot go on without "
                                  "it (the run stops here)",
                                  engine::format_time(sim_.now()), ev.label, g_.job_rank(traces::RankId{r}), left,
                                  doing.empty() ? "" : ", running " + doing));
    }
}

}  // namespace clustersim::sim
