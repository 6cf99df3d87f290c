// Collective algorithms: each expands a collective into a CollectivePlan. Implementations live one per file
// beside this header and are listed in the registry table (collective_registry.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/collectives/collective_plan.h"

namespace clustersim::sim {

class CollectiveAlgorithm {
public:
    virtual ~CollectiveAlgorithm() = default;
    /// Whether this algorithm has a form for the request (kind, member count, node layout).
    [[nodiscard]] virtual bool supports(const PlanRequest& request) const = 0;
    [[nodiscard]] virtual CollectivePlan plan(const PlanRequest& request) const = 0;
};

struct AlgorithmEntry {
    std::string name;
    std::string summary;
    std::unique_ptr<CollectiveAlgorithm> (*make)();
};

/// All algorithms, in alphabetical order.
const std::vector<AlgorithmEntry>& collective_algorithms();
/// Index of the algorithm named `name` in collective_algorithms(), or nullopt.
std::optional<std::size_t> find_collective_algorithm(std::string_view name);
/// "direct, double_tree, ..." for messages.
std::string collective_algorithm_names();

/// Plans with algorithm `index`, or with the kind's default when that algorithm has no form for the request
/// (ring for all_reduce / reduce_scatter / all_gather / barrier / broadcast / reduce, pxn for all_to_all), or
/// with direct when neither has.
/// `used`, when given, receives the algorithm that planned it.
CollectivePlan plan_collective(std::size_t algorithm, const PlanRequest& request, std::size_t* used = nullptr);
std::size_t default_algorithm(traces::CollectiveKind kind);

// Factories, one per file.
std::unique_ptr<CollectiveAlgorithm> make_direct();
std::unique_ptr<CollectiveAlgorithm> make_double_tree();
std::unique_ptr<CollectiveAlgorithm> make_halving_doubling();
std::unique_ptr<CollectiveAlgorithm> make_hierarchical();
std::unique_ptr<CollectiveAlgorithm> make_nvls();
std::unique_ptr<CollectiveAlgorithm> make_pxn_all_to_all();
std::unique_ptr<CollectiveAlgorithm> make_ring();

/// Ring building block shared by ring and hierarchical: `steps` steps around `ring` (member indices in ring
/// order); in step k position i sends piece (i - k - offset) mod n of `bytes` (split in n pieces, or whole
/// pieces of `bytes` each when `whole` is set) to position i+1, after what it received in step k-1 (or, in step
/// 0, after `start_after[i]` when set). With a `relay` member, the hop from the last position to the first goes
/// through it (two transfers). With `reduce`, each receiving position reduces what arrives (the relay only
/// forwards). Returns, per position, the last transfer into it (or start_after[i]).
std::vector<std::uint32_t> append_ring(CollectivePlan& plan, std::span<const std::uint32_t> ring, std::uint32_t steps,
                                       std::uint64_t bytes, bool whole, std::uint32_t offset,
                                       std::span<const std::uint32_t> start_after, std::uint32_t first_step,
                                       std::uint32_t relay = UINT32_MAX, bool reduce = false);

inline constexpr std::uint32_t no_transfer = UINT32_MAX;

}  // namespace clustersim::sim
