// Ring and direct expansions of the collectives. A share that does not divide evenly gives the first members
// one byte more, so the bytes moved add up exactly.
#include "sim/collectives/collective_plan.h"

#include "engine/error.h"

namespace clustersim::sim {

using traces::CollectiveKind;

std::optional<CollectiveAlgorithm> parse_collective_algorithm(std::string_view name) {
    if (name == "ring") return CollectiveAlgorithm::ring;
    if (name == "direct") return CollectiveAlgorithm::direct;
    return std::nullopt;
}

CollectiveAlgorithm default_algorithm(CollectiveKind kind) {
    switch (kind) {
        case CollectiveKind::all_to_all:
        case CollectiveKind::broadcast:
        case CollectiveKind::reduce:
            return CollectiveAlgorithm::direct;
        default:
            return CollectiveAlgorithm::ring;
    }
}

namespace {

std::uint64_t share(std::uint64_t bytes, std::uint32_t n, std::uint32_t chunk) {
    return bytes / n + (chunk < bytes % n ? 1 : 0);
}

/// n-1 ring steps; in step s member i sends chunk (i - s - offset) mod n to member i+1.
void ring_steps(CollectivePlan& plan, std::uint32_t n, std::uint64_t bytes, std::uint32_t offset) {
    for (std::uint32_t s = 0; s + 1 < n; ++s) {
        for (std::uint32_t i = 0; i < n; ++i) {
            const std::uint32_t chunk = (i + 2 * n - s - offset) % n;
            plan.transfers.push_back({i, (i + 1) % n, share(bytes, n, chunk)});
        }
        plan.end_step();
    }
}

void all_pairs_step(CollectivePlan& plan, std::uint32_t n, std::uint64_t bytes) {
    for (std::uint32_t i = 0; i < n; ++i) {
        for (std::uint32_t j = 0; j < n; ++j) {
            if (i != j) plan.transfers.push_back({i, j, share(bytes, n, j)});
        }
    }
    plan.end_step();
}

}  // namespace

CollectivePlan plan_collective(CollectiveKind kind, CollectiveAlgorithm algorithm, std::uint32_t n,
                               std::uint64_t bytes) {
    CLUSTERSIM_CHECK(n >= 1, "collective over no ranks");
    CollectivePlan plan;
    if (n == 1) return plan;
    if (kind == CollectiveKind::barrier) bytes = 0;
    if (algorithm == CollectiveAlgorithm::ring) {
        switch (kind) {
            case CollectiveKind::all_reduce:
            case CollectiveKind::barrier:
                ring_steps(plan, n, bytes, 0);
                ring_steps(plan, n, bytes, n - 1);
                return plan;
            case CollectiveKind::reduce_scatter:
                ring_steps(plan, n, bytes, 0);
                return plan;
            case CollectiveKind::all_gather:
                ring_steps(plan, n, bytes * n, 0);
                return plan;
            default:
                break;  // the others have no ring form here: direct
        }
    }
    switch (kind) {
        case CollectiveKind::all_to_all:
            all_pairs_step(plan, n, bytes);
            break;
        case CollectiveKind::broadcast:
            for (std::uint32_t j = 1; j < n; ++j) plan.transfers.push_back({0, j, bytes});
            plan.end_step();
            break;
        case CollectiveKind::reduce:
            for (std::uint32_t j = 1; j < n; ++j) plan.transfers.push_back({j, 0, bytes});
            plan.end_step();
            break;
        case CollectiveKind::all_gather:
            all_pairs_step(plan, n, bytes * n);
            break;
        case CollectiveKind::reduce_scatter:
            all_pairs_step(plan, n, bytes);
            break;
        case CollectiveKind::all_reduce:
        case CollectiveKind::barrier:
            all_pairs_step(plan, n, bytes);
            all_pairs_step(plan, n, bytes);
            break;
    }
    return plan;
}

}  // namespace clustersim::sim
