// CollectivePlan storage.
#include "sim/collectives/collective_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/memory_budget.h"

namespace clustersim::sim {

namespace {
// What a planned transfer costs while the collective runs, measured: about 83 bytes at the end (the 1 GiB ring
// all-reduce over 1,024 GPUs with 8 channels: 16.7 M transfers, 1,388 MiB peak).
constexpr double bytes_per_transfer = 120;  // with the vectors' growth by doubling

[[noreturn]] void too_large(std::size_t transfers) {
    throw engine::InputError(fmt::format(
        "the collective's plan passes {} transfers (about {}): beyond the memory budget of {} (--max-memory); "
        "fewer channels (--channels) or chunks (--chunks), fewer GPUs, or a larger budget",
        transfers, engine::format_memory(bytes_per_transfer * static_cast<double>(transfers)),
        engine::format_memory(static_cast<double>(engine::memory_budget()))));
}
}  // namespace

std::uint32_t CollectivePlan::add(PlannedTransfer t, std::span<const std::uint32_t> after) {
    CLUSTERSIM_CHECK(rings_.empty(), "a plan of ring schedules given a listed transfer");
    const auto index = static_cast<std::uint32_t>(transfers_.size());
    // Checked while it is built: a plan past the budget (or past 32-bit indices) is refused before it exhausts
    // memory.
    if (index % 4096 == 0 &&
        (bytes_per_transfer * index > static_cast<double>(engine::memory_budget()) || index >= UINT32_MAX - 4096))
        too_large(index);
    for (const std::uint32_t a : after)
        CLUSTERSIM_CHECK(a < index, "transfer {} waits for later transfer {}", index, a);
    CLUSTERSIM_CHECK(t.src != t.dst, "transfer from member {} to itself", t.src);
    CLUSTERSIM_CHECK(t.src != switch_endpoint || t.dst != switch_endpoint, "transfer between two switches");
    CLUSTERSIM_CHECK(t.after_sent == UINT32_MAX || t.after_sent < index, "transfer {} waits for later transfer {}",
                     index, t.after_sent);
    if (offsets_.empty()) offsets_.push_back(0);
    transfers_.push_back(t);
    deps_.insert(deps_.end(), after.begin(), after.end());
    offsets_.push_back(static_cast<std::uint32_t>(deps_.size()));
    return index;
}

std::uint64_t CollectivePlan::size() const {
    return rings_.empty() ? transfers_.size() : rings_.back().first + rings_.back().size();
}

void CollectivePlan::add_ring(RingSchedule ring) {
    CLUSTERSIM_CHECK(transfers_.empty(), "a plan of ring schedules given listed transfers");
    ring.first = size();
    ring.first_slot = rings_.empty() ? 0 : rings_.back().first_slot + rings_.back().width();
    ring.prepare();
    rings_.push_back(std::move(ring));
}

PlannedTransfer CollectivePlan::transfer(std::uint64_t t) const {
    if (rings_.empty()) return transfers_[t];
    const RingSchedule& ring = ring_of(t);
    return ring.transfer(t - ring.first);
}

CollectivePlan CollectivePlan::expanded() const {
    if (rings_.empty()) return *this;
    CollectivePlan plan;
    plan.channels_planned = channels_planned;
    for (const RingSchedule& ring : rings_) ring.expand_into(plan);
    return plan;
}

}  // namespace clustersim::sim
