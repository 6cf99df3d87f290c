// Several training iterations back to back: the graph of one iteration repeated, each rank starting iteration
// k+1 once all its own streams have finished iteration k (as a training loop's step boundary synchronizes the
// device), so skew and late ranks carry over from one iteration to the next while ranks never wait globally.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/time.h"
#include "traces/op_graph.h"
#include "traces/timeline.h"

namespace clustersim::traces {

/// At most this many ops in a repeated graph (op ids are 32-bit).
inline constexpr std::uint64_t max_repeated_ops = 1ULL << 31;

/// `graph` (one iteration) repeated `iterations` times. Collectives and send/recv keep matching by issue order;
/// the first op of each of a rank's streams in iteration k+1 depends on the last op of each of that rank's streams
/// in iteration k. Throws InputError (naming `where`) when the result would exceed max_repeated_ops or the graph
/// is already repeated.
OpGraph repeat_iterations(const OpGraph& graph, std::uint32_t iterations, const std::string& where);

/// When each iteration of a replayed graph ended: the latest end of its ops (one entry per iteration).
std::vector<engine::Time> iteration_ends(const OpGraph& graph, const Timeline& timeline);

}  // namespace clustersim::traces
