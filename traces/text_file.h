// Reading a whole input file as text, gzip-compressed or not (detected by its first bytes, not its name).
#pragma once

#include <string>

namespace clustersim::traces {

/// The file's content, decompressed when it is gzip. Throws InputError naming the file when it cannot be read.
std::string read_text_file(const std::string& path);

/// The first `bytes` bytes of the file's (decompressed) content, for format detection.
std::string read_text_prefix(const std::string& path, std::size_t bytes);

}  // namespace clustersim::traces
