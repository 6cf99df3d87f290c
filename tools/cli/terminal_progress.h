// A progress line for long replays: on stderr, only when stderr is a terminal and the cli logger shows info,
// and only once a run has taken two seconds; rewritten in place at most every quarter second, cleared at the end.
#pragma once

#include <chrono>
#include <string>

#include "sim/replay/replay.h"

namespace clustersim::cli {

class TerminalProgress {
public:
    explicit TerminalProgress(std::string label);
    ~TerminalProgress();
    TerminalProgress(const TerminalProgress&) = delete;
    TerminalProgress& operator=(const TerminalProgress&) = delete;

    /// The reporter to put in ReplayOptions::progress (does nothing when the line is disabled).
    [[nodiscard]] sim::ProgressReporter reporter();

private:
    static void report(void* self, const sim::ReplayProgress& progress);

    std::string label_;
    std::chrono::steady_clock::time_point start_, last_;
    bool enabled_ = false;
    bool shown_ = false;
};

/// Calls `run` (which replays with `options`) with a progress line labelled `label`; the line is cleared and the
/// reporter taken out of `options` before it returns.
template <class Run>
auto with_progress(const std::string& label, sim::ReplayOptions& options, Run&& run) {
    TerminalProgress progress(label);
    options.progress = progress.reporter();
    auto result = run();
    options.progress = {};
    return result;
}

}  // namespace clustersim::cli
