// Loggers, one per layer ("engine", "topo", "traces", "workloads", "sim", "cli"), all writing to stderr.
// stdout carries only results. Library code asks for its layer's logger; before set-up, that logger is silent.
#pragma once

#include <string_view>

#include <spdlog/fwd.h>

namespace clustersim::engine {

/// The logger of one layer. Never null: an unconfigured layer gets a logger with no sink.
spdlog::logger& layer_log(std::string_view layer);

/// Creates the per-layer stderr loggers at `level` (spdlog::level::level_enum as int). Called once by main.
void setup_logging(int level);

}  // namespace clustersim::engine
