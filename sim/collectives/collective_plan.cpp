// CollectivePlan storage.
#include "sim/collectives/collective_plan.h"

#include <algorithm>

#include "engine/error.h"

namespace clustersim::sim {

std::uint32_t CollectivePlan::add(PlannedTransfer t, std::span<const std::uint32_t> after) {
    const auto index = static_cast<std::uint32_t>(transfers_.size());
    for (const std::uint32_t a : after)
        CLUSTERSIM_CHECK(a < index, "transfer {} waits for later transfer {}", index, a);
    CLUSTERSIM_CHECK(t.src != t.dst, "transfer from member {} to itself", t.src);
    CLUSTERSIM_CHECK(t.src != switch_endpoint || t.dst != switch_endpoint, "transfer between two switches");
    CLUSTERSIM_CHECK(t.after_sent == UINT32_MAX || t.after_sent < index, "transfer {} waits for later transfer {}",
                     index, t.after_sent);
    transfers_.push_back(t);
    deps_.insert(deps_.end(), after.begin(), after.end());
    offsets_.push_back(static_cast<std::uint32_t>(deps_.size()));
    return index;
}

std::uint64_t CollectivePlan::total_bytes() const {
    std::uint64_t total = 0;
    for (const auto& t : transfers_) total += t.bytes;
    return total;
}

std::uint32_t CollectivePlan::steps() const {
    std::uint32_t steps = 0;
    for (const auto& t : transfers_) steps = std::max(steps, t.step + 1);
    return steps;
}

}  // namespace clustersim::sim
