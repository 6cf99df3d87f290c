// A collective expanded into steps of transfers between members of its communicator. Steps run one after the
// other; the transfers of a step run at once as flows on the network, so contention between them (and with
// anything else on the network) is simulated, not assumed.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "traces/op_graph.h"

namespace clustersim::sim {

struct PlannedTransfer {
    std::uint32_t src = 0;  // member index in the communicator
    std::uint32_t dst = 0;
    std::uint64_t bytes = 0;
};

struct CollectivePlan {
    std::vector<std::uint32_t> step_offsets = {0};  // transfers of step s: [step_offsets[s], step_offsets[s+1])
    std::vector<PlannedTransfer> transfers;
    [[nodiscard]] std::size_t steps() const { return step_offsets.size() - 1; }
    void end_step() { step_offsets.push_back(static_cast<std::uint32_t>(transfers.size())); }
};

enum class CollectiveAlgorithm : std::uint8_t { ring, direct };

/// "ring" or "direct"; nullopt otherwise.
std::optional<CollectiveAlgorithm> parse_collective_algorithm(std::string_view name);
/// The default for a collective kind: ring for all_reduce / reduce_scatter / all_gather / barrier, direct for
/// all_to_all / broadcast / reduce.
CollectiveAlgorithm default_algorithm(traces::CollectiveKind kind);

/// Expands a collective of `bytes` per rank (the op's buffer size) over `ranks` members. Ring: all_reduce is
/// n-1 reduce-scatter steps then n-1 all-gather steps, each moving bytes/n from every member to the next;
/// reduce_scatter and all_gather are n-1 such steps. Direct: every transfer in one step (all_to_all: bytes/n to
/// each peer; broadcast/reduce: bytes between the root, member 0, and each other member; all_reduce: a
/// reduce-scatter then an all-gather of bytes/n between all pairs).
CollectivePlan plan_collective(traces::CollectiveKind kind, CollectiveAlgorithm algorithm, std::uint32_t ranks,
                               std::uint64_t bytes);

}  // namespace clustersim::sim
