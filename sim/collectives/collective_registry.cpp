// The table of collective algorithms, kept in alphabetical order.
#include <algorithm>

#include "engine/error.h"
#include "sim/collectives/collective_algorithm.h"

namespace clustersim::sim {

const std::vector<AlgorithmEntry>& collective_algorithms() {
    static const std::vector<AlgorithmEntry> entries = [] {
        std::vector<AlgorithmEntry> e;
        e.push_back({"direct", "every member exchanges with every other at once (mesh)", &make_direct});
        e.push_back({"double_tree", "two complementary binary trees, pipelined in chunks (NCCL tree; all-reduce)",
                     &make_double_tree});
        e.push_back(
            {"halving_doubling", "recursive halving then doubling (power-of-two members)", &make_halving_doubling});
        e.push_back({"hierarchical",
                     "ring inside each node, ring across nodes per local rank, ring inside again (all-reduce)",
                     &make_hierarchical});
        e.push_back({"nvls", "in-switch reduction and multicast inside one NVSwitch node (NVLink SHARP; all-reduce)",
                     &make_nvls});
        e.push_back({"pxn",
                     "all-to-all through the NVLink peer on the destination's rail, one rail-aligned transfer per "
                     "destination (NCCL PXN)",
                     &make_pxn_all_to_all});
        e.push_back({"ring", "ring with a step per neighbour transfer (NCCL ring); chains for broadcast and reduce",
                     &make_ring});
        return e;
    }();
    return entries;
}

std::optional<std::size_t> find_collective_algorithm(std::string_view name) {
    const auto& all = collective_algorithms();
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (all[i].name == name) return i;
    }
    return std::nullopt;
}

std::string collective_algorithm_names() {
    std::string out;
    for (const auto& e : collective_algorithms()) out += (out.empty() ? "" : ", ") + e.name;
    return out;
}

std::size_t default_algorithm(traces::CollectiveKind kind) {
    return *find_collective_algorithm(kind == traces::CollectiveKind::all_to_all ? "pxn" : "ring");
}

CollectivePlan plan_collective(std::size_t algorithm, const PlanRequest& request, std::size_t* used) {
    // Built once: the implementations hold no data.
    static const std::vector<std::unique_ptr<CollectiveAlgorithm>> instances = [] {
        std::vector<std::unique_ptr<CollectiveAlgorithm>> v;
        for (const auto& e : collective_algorithms()) v.push_back(e.make());
        return v;
    }();
    CLUSTERSIM_CHECK(algorithm < instances.size(), "unknown algorithm index {}", algorithm);
    // The requested algorithm, else the kind's default, else direct (which has a form for everything). Per-member
    // sizes: only direct and PXN plan them.
    const std::size_t direct = *find_collective_algorithm("direct"), pxn = *find_collective_algorithm("pxn");
    for (const std::size_t candidate : {algorithm, default_algorithm(request.kind), direct}) {
        if (!request.member_bytes.empty() && candidate != direct && candidate != pxn) continue;
        if (!instances[candidate]->supports(request)) continue;
        if (used) *used = candidate;
        return instances[candidate]->plan(request);
    }
    CLUSTERSIM_CHECK(false, "no algorithm plans {}", traces::collective_kind_name(request.kind));
    return {};
}

}  // namespace clustersim::sim
