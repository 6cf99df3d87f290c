// Reading a whole input file as text, gzip-compressed or not (detected by its first bytes, not its name).
#pragma once

#include <string>

namespace clustersim::traces {

/// The file's content, decompressed when it is gzip. Throws InputError naming the file when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace clustersim::traces
