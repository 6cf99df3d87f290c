// Atomic output: content goes to a temporary file beside the target, renamed over it only when complete, so a
// failed run never leaves a half-written file that looks finished.
#pragma once

#include <filesystem>
#include <fstream>
#include <string_view>

namespace clustersim::engine {

/// An output file written through a temporary. Call commit() when done; otherwise the destructor removes it.
class AtomicFile {
public:
    explicit AtomicFile(std::filesystem::path target);
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile();

    [[nodiscard]] std::ostream& stream() { return out_; }
    /// Flushes, closes and renames the temporary onto the target. Throws InputError if writing failed.
    void commit();

private:
    std::filesystem::path target_;
    std::filesystem::path temporary_;
    std::ofstream out_;
    bool committed_ = false;
    int interrupt_slot_ = -1;  // the temporary, removed if the process is interrupted (engine/interrupt.h)
};

/// Creates the output folder `dir` and its parents if missing; throws InputError naming it when it cannot (a file in
/// the way, no permission).
void create_folder(const std::filesystem::path& dir);

/// Writes `content` to `target` atomically.
void write_file_atomically(const std::filesystem::path& target, std::string_view content);

}  // namespace clustersim::engine
