// Helpers shared by the tests: fixture paths, the shared real-data folder, small hand-built clusters.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace clustersim::testing {

/// A file under tests/data/.
inline std::string test_data(const std::string& relative) {
    return std::string(CLUSTERSIM_TEST_DATA_DIR) + "/" + relative;
}

/// ../shared/data, when it is there (CI has it); tests that need it skip with a message otherwise.
inline bool shared_data_available() { return std::filesystem::is_directory(CLUSTERSIM_SHARED_DATA_DIR); }
inline std::string shared_data(const std::string& relative) {
    return std::string(CLUSTERSIM_SHARED_DATA_DIR) + "/" + relative;
}

/// Writes `content` (bytes as given) to a file named `name` in this process's folder of the temporary folder (tests
/// run in parallel, and test runs beside each other, must not share files) and returns its path.
inline std::string write_temp_file(const std::string& name, const std::string& content) {
    const auto dir = std::filesystem::temp_directory_path() / ("clustersim-tests-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
}

}  // namespace clustersim::testing
