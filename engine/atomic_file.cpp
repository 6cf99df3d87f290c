// Temporary-then-rename file writing.
#include "engine/atomic_file.h"

#include <unistd.h>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/interrupt.h"

namespace clustersim::engine {

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
    temporary_ = target_;
    temporary_ += fmt::format(".tmp{}", static_cast<long>(::getpid()));
    interrupt_slot_ = register_temporary(temporary_.c_str());
    out_.open(temporary_, std::ios::binary | std::ios::trunc);
    if (!out_) {
        release_temporary(interrupt_slot_);
        throw InputError(SourceLocation{target_.string()}, "cannot open for writing");
    }
}

AtomicFile::~AtomicFile() {
    release_temporary(interrupt_slot_);
    if (committed_) return;
    out_.close();
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
}

void AtomicFile::commit() {
    out_.flush();
    const bool ok = static_cast<bool>(out_);
    out_.close();
    if (!ok) throw InputError(SourceLocation{target_.string()}, "write failed (disk full?)");
    std::error_code ec;
    std::filesystem::rename(temporary_, target_, ec);
    release_temporary(interrupt_slot_);
    interrupt_slot_ = -1;
    if (ec)
        throw InputError(SourceLocation{target_.string()}, fmt::format("cannot rename into place: {}", ec.message()));
    committed_ = true;
}

void write_file_atomically(const std::filesystem::path& target, std::string_view content) {
    AtomicFile file(target);
    file.stream().write(content.data(), static_cast<std::streamsize>(content.size()));
    file.commit();
}

void create_folder(const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir))
        throw InputError(SourceLocation{dir.string()},
                         fmt::format("cannot create the output folder: {}", ec ? ec.message() : "not a folder"));
}

}  // namespace clustersim::engine
