// Timers of the simulator: each has at most one pending event, moved in place when re-armed.
#include "engine/simulator.h"

namespace clustersim::engine {

TimerId Simulator::make_timer() {
    timer_slot_.push_back(no_slot);
    return static_cast<TimerId>(timer_slot_.size() - 1);
}

void Simulator::arm(TimerId timer, Time at, std::uint16_t kind) {
    CLUSTERSIM_CHECK(timer < timer_slot_.size(), "unknown timer {}", timer);
    CLUSTERSIM_CHECK(at >= now_, "timer armed in the past: at {} ps, now {} ps", at.count(), now_.count());
    constexpr std::uint32_t timer_event = 1;  // an event's generation: 0 for plain events, 1 for a timer's
    if (timer_slot_[timer] != no_slot)
        queue_.reschedule(timer_slot_[timer], at, kind, timer, timer_event);
    else
        timer_slot_[timer] = queue_.push_movable(at, kind, timer, timer_event);
}

void Simulator::cancel(TimerId timer) {
    CLUSTERSIM_CHECK(timer < timer_slot_.size(), "unknown timer {}", timer);
    if (timer_slot_[timer] != no_slot) queue_.remove(timer_slot_[timer]);
    timer_slot_[timer] = no_slot;
}

}  // namespace clustersim::engine
