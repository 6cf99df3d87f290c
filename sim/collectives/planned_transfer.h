// One transfer of a collective's plan: between two members (or a member and its node's switch), with its step and
// the channel FIFO it waits on. Shared by listed plans (collective_plan.h) and ring schedules (ring_schedule.h).
#pragma once

#include <cstdint>

namespace clustersim::sim {

/// An endpoint that is not a member: the NVSwitch of the other endpoint's node (in-switch reduction, NVLS).
inline constexpr std::uint32_t switch_endpoint = UINT32_MAX - 1;

struct PlannedTransfer {
    std::uint32_t src = 0;  // member index in the communicator, or switch_endpoint
    std::uint32_t dst = 0;
    std::uint64_t bytes = 0;
    std::uint32_t step = 0;  // algorithm step, for latency accounting and display
    /// A transfer on the same edge whose last byte must have left the sender first (the channel's FIFO: sends
    /// on one connection go one after the other, but a send's latency overlaps the next one).
    std::uint32_t after_sent = UINT32_MAX;
    /// The receiver reduces what arrives into its own data (reduce-scatter steps, tree and chain reductions):
    /// the GPU reads, adds and writes it, which the executor times at the GPU's memory bandwidth.
    bool reduces = false;
};

/// The share of `bytes` that chunk `chunk` of `parts` carries: the first ones take the remainder.
constexpr std::uint64_t share_of(std::uint64_t bytes, std::uint64_t parts, std::uint64_t chunk) {
    return bytes / parts + (chunk < bytes % parts ? 1 : 0);
}

}  // namespace clustersim::sim
