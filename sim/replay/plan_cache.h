// Collective plans kept for the calls that repeat them: the same communicator, kind, size, pipelining and
// algorithm give the same plan, and the executor's per-transfer arrays built from it (dependencies, FIFO successors,
// each member's transfers). A training step repeats its calls layer after layer and step after step; building a
// 128-member double tree's plan and arrays cost about 9 M instructions a call (bench_replay), copying them a few
// hundred thousand.
#pragma once

#include <compare>
#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "sim/collectives/collective_plan.h"

namespace clustersim::sim {

/// What a listed plan and its arrays depend on, besides the run's options and the communicator's fixed facts.
struct PlanKey {
    std::uint32_t comm = 0;
    traces::CollectiveKind kind = traces::CollectiveKind::all_reduce;
    std::uint64_t bytes = 0;
    std::uint32_t chunks = 1;
    std::size_t algorithm = 0;  // the one asked for (plan_collective may fall back to another)
    auto operator<=>(const PlanKey&) const = default;
};

/// A listed plan with the executor's arrays for it, as a call starts: what plan_instance builds.
struct CachedPlan {
    CollectivePlan plan;
    std::size_t algorithm = 0;                     // the one that planned it
    std::vector<std::uint32_t> pending;            // by transfer: dependencies and endpoints to wait for
    std::vector<std::uint32_t> fifo_next;          // by transfer
    std::vector<std::uint32_t> dependent_offsets;  // by transfer (CSR)
    std::vector<std::uint32_t> dependents;
    std::vector<std::uint32_t> member_offsets;  // by member (CSR)
    std::vector<std::uint32_t> member_transfers;
    std::vector<std::uint32_t> member_left;  // by member
    /// By transfer: the kept route its first channel took on the last call (start_flows), found without a lookup
    /// when the entry still is that route (its ends and key checked); shared by the calls of this plan.
    struct RouteHint {
        std::uint32_t kept = UINT32_MAX;
        std::uint32_t epoch = 0;  // of the kept routes (cleared when a link changes state)
    };
    std::vector<RouteHint> route_hints;
};

class PlanCache {
public:
    /// A plan of ring schedules (no arrays: the executor keeps state only for the transfers in flight), with the
    /// algorithm that planned it.
    struct Schedule {
        CollectivePlan plan;
        std::size_t algorithm = 0;
    };

    /// At most this many transfers (or schedules' slots) are kept over all plans (about 60 bytes each with their
    /// arrays).
    static constexpr std::uint64_t max_transfers = std::uint64_t{1} << 20;

    /// (Entries, plans and schedules, stay where they are for the whole run: callers keep pointers to them.)
    [[nodiscard]] CachedPlan* find(const PlanKey& key) {
        const auto it = plans_.find(key);
        return it == plans_.end() ? nullptr : &it->second;
    }
    /// Keeps `plan` for `key` if there is room (a plan already kept for it stays); the entry kept, or null.
    CachedPlan* keep(const PlanKey& key, CachedPlan&& plan) {
        const std::uint64_t transfers = plan.plan.transfers().size();
        if (transfers_ + transfers > max_transfers) return nullptr;
        const auto [it, fresh] = plans_.try_emplace(key, std::move(plan));
        if (fresh) {
            transfers_ += transfers;
            it->second.route_hints.assign(transfers, {});
        }
        return &it->second;
    }

    /// (By communicator: a call looks through its own few keys, not a tree of every communicator's.)
    [[nodiscard]] const Schedule* find_schedule(const PlanKey& key) const {
        if (key.comm >= schedules_.size()) return nullptr;
        for (const auto& [k, schedule] : schedules_[key.comm]) {
            if (k == key) return &schedule;
        }
        return nullptr;
    }
    /// Keeps a plan of ring schedules for `key` if there is room (counted by its slots, as its memory grows).
    void keep_schedule(const PlanKey& key, Schedule&& schedule) {
        const std::uint64_t slots = schedule.plan.slots();
        if (transfers_ + slots > max_transfers || find_schedule(key)) return;
        if (key.comm >= schedules_.size()) schedules_.resize(key.comm + 1);
        schedules_[key.comm].emplace_back(key, std::move(schedule));
        transfers_ += slots;
    }

private:
    std::map<PlanKey, CachedPlan> plans_;
    std::vector<std::deque<std::pair<PlanKey, Schedule>>> schedules_;  // by communicator (a deque: entries stay put)
    std::uint64_t transfers_ = 0;
};

}  // namespace clustersim::sim
