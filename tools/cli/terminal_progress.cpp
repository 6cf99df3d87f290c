#include "tools/cli/terminal_progress.h"

#include <unistd.h>
#include <cstdio>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/log.h"

namespace clustersim::cli {

TerminalProgress::TerminalProgress(std::string label)
    : label_(std::move(label)),
      start_(std::chrono::steady_clock::now()),
      last_(start_),
      enabled_(isatty(fileno(stderr)) != 0 && engine::layer_log("cli").should_log(spdlog::level::info)) {}

TerminalProgress::~TerminalProgress() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
}

sim::ProgressReporter TerminalProgress::reporter() {
    return enabled_ ? sim::ProgressReporter{&TerminalProgress::report, this} : sim::ProgressReporter{};
}

void TerminalProgress::report(void* self, const sim::ReplayProgress& p) {
    auto& t = *static_cast<TerminalProgress*>(self);
    const auto now = std::chrono::steady_clock::now();
    if (now - t.start_ < std::chrono::seconds(2) || now - t.last_ < std::chrono::milliseconds(250)) return;
    t.last_ = now;
    t.shown_ = true;
    const double percent = p.ops ? 100.0 * static_cast<double>(p.ops_done) / static_cast<double>(p.ops) : 0.0;
    const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(now - t.start_).count();
    const std::string line =
        fmt::format("\r\033[K{}: {:.1f}% of {} ops, simulated {}, {:.1f} M events, {} s", t.label_, percent, p.ops,
                    engine::format_time(p.now), static_cast<double>(p.events) / 1e6, elapsed);
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
}

}  // namespace clustersim::cli
