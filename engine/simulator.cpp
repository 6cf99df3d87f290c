// Timers of the simulator: generation counters that make superseded events stale (lazy deletion).
#include "engine/simulator.h"

namespace clustersim::engine {

TimerId Simulator::make_timer() {
    timer_generation_.push_back(0);
    timer_armed_.push_back(0);
    return static_cast<TimerId>(timer_generation_.size() - 1);
}

void Simulator::arm(TimerId timer, Time at, std::uint16_t kind) {
    CLUSTERSIM_CHECK(timer < timer_generation_.size(), "unknown timer {}", timer);
    CLUSTERSIM_CHECK(at >= now_, "timer armed in the past: at {} ps, now {} ps", at.count(), now_.count());
    std::uint32_t generation = ++timer_generation_[timer];
    if (generation == 0) generation = timer_generation_[timer] = 1;  // 0 marks non-timer events
    timer_armed_[timer] = 1;
    queue_.push(at, kind, timer, generation);
}

void Simulator::cancel(TimerId timer) {
    CLUSTERSIM_CHECK(timer < timer_generation_.size(), "unknown timer {}", timer);
    ++timer_generation_[timer];
    timer_armed_[timer] = 0;
}

}  // namespace clustersim::engine
