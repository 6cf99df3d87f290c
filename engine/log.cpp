// Per-layer spdlog loggers on stderr. The spdlog registry is the only process-wide state, and it never
// affects results.
#include "engine/log.h"

#include <array>
#include <string>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace clustersim::engine {

namespace {
constexpr std::array<const char*, 6> layers = {"engine", "topo", "traces", "workloads", "sim", "cli"};
}

spdlog::logger& layer_log(std::string_view layer) {
    const std::string name(layer);
    if (auto existing = spdlog::get(name)) return *existing;
    auto silent = std::make_shared<spdlog::logger>(name, std::make_shared<spdlog::sinks::null_sink_mt>());
    spdlog::register_logger(silent);
    return *silent;
}

void setup_logging(int level) {
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    sink->set_pattern("[%^%l%$] %n: %v");
    for (const char* name : layers) {
        spdlog::drop(name);
        auto logger = std::make_shared<spdlog::logger>(name, sink);
        logger->set_level(static_cast<spdlog::level::level_enum>(level));
        spdlog::register_logger(logger);
    }
}

}  // namespace clustersim::engine
