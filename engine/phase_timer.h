// Where a run's wall time goes, for `-v`: a phase (building the plan, the replay, the outputs) logs its wall time and
// the process's peak resident memory when it ends. Debug level only: stdout and the output files never carry wall
// times, so outputs stay byte-identical run to run.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace clustersim::engine {

class PhaseTimer {
public:
    /// Starts timing `phase`, logged on `layer`'s logger when it ends.
    PhaseTimer(std::string_view layer, std::string phase);
    ~PhaseTimer();
    PhaseTimer(const PhaseTimer&) = delete;
    PhaseTimer& operator=(const PhaseTimer&) = delete;

private:
    std::string_view layer_;
    std::string phase_;
    std::chrono::steady_clock::time_point start_;
};

/// Peak resident set size of this process so far, in bytes.
[[nodiscard]] long long peak_resident_bytes();

}  // namespace clustersim::engine
