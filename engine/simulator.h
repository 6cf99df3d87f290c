// The clock and the run loop. A model schedules small events; the loop pops them in (time, seq) order and hands
// each to the model's handler, a plain callable inlined into the loop (no virtual call, no std::function).
// Timers: a re-armed timer's pending event is moved in the queue (a fresh sequence number, as a new event would
// get) and a cancelled one removed, so the queue holds only live events.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "engine/error.h"
#include "engine/event_queue.h"
#include "engine/time.h"

namespace clustersim::engine {

/// A cancellable event slot owned by a model (for example one per flow, re-armed when its rate changes).
using TimerId = std::uint32_t;

/// Bounds of one call to Simulator::run.
struct RunLimits {
    Time until = max_time;                  // events at times <= until run; later ones stay queued
    std::uint64_t max_events = UINT64_MAX;  // at most this many events run in this call
};

enum class StopReason { queue_empty, time_limit, event_limit, stop_requested };

class Simulator {
public:
    [[nodiscard]] Time now() const { return now_; }
    [[nodiscard]] std::uint64_t events_processed() const { return processed_; }
    /// Events in the queue (all live: timers move or remove theirs).
    [[nodiscard]] std::size_t pending() const { return queue_.size(); }
    void reserve(std::size_t events) { queue_.reserve(events); }

    /// Schedules an event at absolute time `at` (not before now). Returns its sequence number.
    std::uint64_t schedule_at(Time at, std::uint16_t kind, std::uint32_t target) {
        CLUSTERSIM_CHECK(at >= now_, "event scheduled in the past: at {} ps, now {} ps", at.count(), now_.count());
        return queue_.push(at, kind, target, 0);
    }
    /// Schedules an event `delay` after now.
    std::uint64_t schedule_after(Time delay, std::uint16_t kind, std::uint32_t target) {
        return schedule_at(now_ + delay, kind, target);
    }

    /// Creates a timer: a slot with at most one live pending event.
    TimerId make_timer();
    /// (Re)arms a timer: its previous pending event, if any, will not fire. The event's target is the timer id.
    void arm(TimerId timer, Time at, std::uint16_t kind);
    /// Cancels a timer's pending event, if any.
    void cancel(TimerId timer);
    [[nodiscard]] bool armed(TimerId timer) const { return timer_slot_[timer] != no_slot; }

    /// The next event's target and kind, if an event is pending (a handler may prefetch what it will read).
    [[nodiscard]] bool next_event(std::uint32_t& target, std::uint16_t& kind) const {
        if (queue_.empty()) return false;
        std::tie(target, kind) = queue_.top_target();
        return true;
    }
    /// Asks the running loop to return after the current event.
    void request_stop() { stop_requested_ = true; }

    /// Runs events in (time, seq) order, calling handler(const Event&) for each live one, until the queue is
    /// empty, the time bound is passed (the clock is then set to the bound), max_events ran, or a stop request.
    template <class Handler>
    StopReason run(Handler& handler, RunLimits limits = {}) {
        stop_requested_ = false;
        std::uint64_t ran = 0;
        while (!queue_.empty()) {
            if (ran >= limits.max_events) return StopReason::event_limit;
            if (queue_.top_time() > limits.until) {
                now_ = limits.until;
                return StopReason::time_limit;
            }
            const Event e = queue_.pop();
            if (e.generation != 0) timer_slot_[e.target] = no_slot;  // a timer's event: the timer is free again
            CLUSTERSIM_CHECK(e.at >= now_, "time moved backwards: event at {} ps, now {} ps", e.at.count(),
                             now_.count());
            now_ = e.at;
            ++processed_;
            ++ran;
            handler(e);
            if (stop_requested_) return StopReason::stop_requested;
        }
        if (limits.until != max_time && limits.until > now_) now_ = limits.until;
        return StopReason::queue_empty;
    }

private:
    EventQueue queue_;
    Time now_{};
    std::uint64_t processed_ = 0;
    bool stop_requested_ = false;
    static constexpr std::uint32_t no_slot = UINT32_MAX;
    std::vector<std::uint32_t> timer_slot_;  // the queue slot of the timer's pending event, or no_slot
};

}  // namespace clustersim::engine
