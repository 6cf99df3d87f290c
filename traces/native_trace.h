// The native trace format: versioned JSON holding an OpGraph exactly (docs/formats.md). Reader and writer
// round-trip: write(read(x)) == x byte for byte, read(write(g)) == g.
#pragma once

#include <string>

#include "traces/op_graph.h"

namespace clustersim::traces {

inline constexpr int native_trace_version = 1;

/// Reads a native trace; errors name the file, the JSON offset or key path, and what was expected.
OpGraph read_native_trace(const std::string& path);
OpGraph parse_native_trace(const std::string& text, const std::string& name);

/// The trace as JSON text (one op per line, so diffs stay readable).
std::string native_trace_text(const OpGraph& graph);
/// Writes it atomically.
void write_native_trace(const OpGraph& graph, const std::string& path);

}  // namespace clustersim::traces
