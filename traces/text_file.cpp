// Whole-file reading through zlib's gz interface, which passes uncompressed files through unchanged.
#include "traces/text_file.h"

#include <zlib.h>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/memory_budget.h"

namespace clustersim::traces {

std::string read_text_file(const std::string& path) {
    gzFile file = gzopen(path.c_str(), "rb");
    if (!file) throw engine::InputError(engine::SourceLocation{path}, "cannot open file");
    gzbuffer(file, 1 << 20);
    std::string out;
    char buffer[1 << 16];
    // Read whole, so capped: a file (or a gzip bomb's content, or /dev/zero) beyond half the memory budget leaves
    // no room for what is built from it.
    const std::uint64_t cap = engine::memory_budget() / 2;
    engine::MemoryScope scope("reading " + path);
    while (true) {
        const int n = gzread(file, buffer, sizeof buffer);
        if (n < 0) {
            int code = 0;
            const std::string why = gzerror(file, &code);
            gzclose(file);
            throw engine::InputError(engine::SourceLocation{path},
                                     fmt::format("cannot read: {} (truncated or corrupt gzip?)", why));
        }
        if (n == 0) break;
        if (out.size() + static_cast<std::size_t>(n) > cap) {
            const bool compressed = gzdirect(file) == 0;
            gzclose(file);
            throw engine::InputError(
                engine::SourceLocation{path},
                fmt::format("more than {} of content{}: beyond half the memory budget of {} "
                            "(--max-memory)",
                            engine::format_memory(static_cast<double>(cap)), compressed ? " once decompressed" : "",
                            engine::format_memory(static_cast<double>(engine::memory_budget()))));
        }
        out.append(buffer, static_cast<std::size_t>(n));
    }
    gzclose(file);
    return out;
}

std::string read_text_prefix(const std::string& path, std::size_t bytes) {
    gzFile file = gzopen(path.c_str(), "rb");
    if (!file) throw engine::InputError(engine::SourceLocation{path}, "cannot open file");
    std::string out(bytes, '\0');
    const int n = gzread(file, out.data(), static_cast<unsigned>(bytes));
    gzclose(file);
    if (n < 0) throw engine::InputError(engine::SourceLocation{path}, "cannot read (corrupt gzip?)");
    out.resize(static_cast<std::size_t>(n));
    return out;
}

}  // namespace clustersim::traces
