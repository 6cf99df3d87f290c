// The kinds of events the system model schedules. The engine carries them as a uint16 without looking; the
// simulation's dispatcher switches over them. One enum for all of sim/ so kinds never collide.
#pragma once

#include <cstdint>

namespace clustersim::sim {

enum class EventKind : std::uint16_t {
    flow_drained,         // target: timer of a flow whose last byte has left its source
    flow_arrived,         // target: flow whose last byte has reached its destination
    network_rate_update,  // target: unused; recompute max-min rates of the links touched at this instant
    compute_done,         // target: timer of a stream whose compute op has finished
    modelled_done,        // target: collective instance timed by a model (folded, or the cost-model mode), done
    cluster_event,        // target: index into ReplayOptions::cluster_events
    rank_start,           // target: a rank whose first ops start now (ReplayOptions::rank_start)
    straggler_bound,      // target: 2 x straggler + (0: its window opens, 1: it closes)
    closed_form_done,     // target: a member's end in a call timed in closed form (ReplayEngine::closed_done_)
    closed_form_commit,   // target: instance whose closed-form timings of this instant are committed
    repeat_deadline,      // target: a call timed from a record, just after the record's last arrival
    repeat_failed,        // target: unused; calls arrived otherwise than their records: the replay starts over
    repeat_done,          // target: a member's end in a call timed from a record (ReplayEngine::closed_done_)
    count_
};

constexpr std::uint16_t to_u16(EventKind kind) { return static_cast<std::uint16_t>(kind); }

}  // namespace clustersim::sim
