// The executor's state of a scheduled collective's transfers (ring_schedule.h), kept only while it matters: from
// the first condition a transfer meets until it has arrived and its dependents have read its ideal end, in a flat
// table keyed by plan index (engine/flat_map.h): no allocation per transfer, memory by the transfers in flight.
#pragma once

#include <cstdint>

#include "engine/flat_map.h"
#include "engine/time.h"

namespace clustersim::sim {

struct TransferState {
    std::uint32_t pending = 0;       // conditions not yet met before it starts
    std::uint32_t flows_left = 0;    // its flows not yet arrived
    std::uint32_t flows_unsent = 0;  // its flows not yet drained
    std::uint8_t readers = 0;        // dependents that have yet to read ideal_done
    bool done = false;               // arrived
    engine::Time ideal_done{};       // its end on an empty network, relative to the call's first transfer
};

/// By plan index.
using TransferStates = engine::FlatMap64<TransferState>;

}  // namespace clustersim::sim
