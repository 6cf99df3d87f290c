#include "engine/phase_timer.h"

#include <sys/resource.h>

#include <spdlog/spdlog.h>

#include "engine/log.h"

namespace clustersim::engine {

PhaseTimer::PhaseTimer(std::string_view layer, std::string phase)
    : layer_(layer), phase_(std::move(phase)), start_(std::chrono::steady_clock::now()) {}

PhaseTimer::~PhaseTimer() {
    auto& log = layer_log(layer_);
    if (!log.should_log(spdlog::level::debug)) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    log.debug("{}: {:.2f} s wall, peak RSS {:.0f} MiB so far", phase_, seconds,
              static_cast<double>(peak_resident_bytes()) / (1 << 20));
}

long long peak_resident_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<long long>(usage.ru_maxrss) * 1024;  // (KiB on Linux)
}

}  // namespace clustersim::engine
