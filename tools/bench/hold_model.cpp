// Hold-model implementations for the engine benchmark and the `clustersim bench engine` demo.
#include "tools/bench/hold_model.h"

namespace clustersim::bench {

namespace {
constexpr std::int64_t mean_increment_ps = 1'000'000;  // 1 us between an event and the one it schedules
constexpr std::uint16_t hold_event = 1;
}  // namespace

SimulatorHold::SimulatorHold(std::size_t pending, std::uint64_t seed, std::uint32_t distinct)
    : increments_(seed, mean_increment_ps, distinct) {
    sim_.reserve(pending + 1);
    for (std::size_t i = 0; i < pending; ++i)
        sim_.schedule_at(increments_.next(), hold_event, static_cast<std::uint32_t>(i));
}

std::uint64_t SimulatorHold::run(std::uint64_t events) {
    auto handler = [this](const engine::Event& e) { sim_.schedule_after(increments_.next(), hold_event, e.target); };
    const std::uint64_t before = sim_.events_processed();
    sim_.run(handler, engine::RunLimits{engine::max_time, events});
    return sim_.events_processed() - before;
}

BareHold::BareHold(std::size_t pending, std::uint64_t seed, std::uint32_t distinct)
    : increments_(seed, mean_increment_ps, distinct) {
    std::vector<Entry> initial;
    initial.reserve(pending + 1);
    for (std::size_t i = 0; i < pending; ++i) initial.emplace_back(increments_.next().count(), seq_++);
    queue_ = std::priority_queue<Entry, std::vector<Entry>, std::greater<>>(std::greater<>{}, std::move(initial));
}

std::uint64_t BareHold::run(std::uint64_t events) {
    for (std::uint64_t i = 0; i < events; ++i) {
        now_ = queue_.top().first;
        queue_.pop();
        queue_.emplace(now_ + increments_.next().count(), seq_++);
    }
    return events;
}

}  // namespace clustersim::bench
