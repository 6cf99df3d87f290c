// Chakra execution traces (.et, optionally .gz): one file per rank, a varint-length-delimited protobuf stream of
// a GlobalMetadata message and Node messages. What is read: docs/formats.md ("Chakra").
#pragma once

#include <string>
#include <vector>

#include "traces/op_graph.h"

namespace clustersim::traces {

/// Reads one file per rank; the rank is the file's position in `files` (sort them: name.0.et, name.1.et, ...).
OpGraph read_chakra(const std::vector<std::string>& files);

/// Whether the start of a file looks like a Chakra trace (a short length-delimited GlobalMetadata).
bool looks_like_chakra(const std::string& text);

}  // namespace clustersim::traces
