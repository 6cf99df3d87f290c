// Interrupts: the temporaries of outputs being written are removed, and the exit code says which signal.
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <filesystem>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "engine/atomic_file.h"
#include "engine/interrupt.h"

using namespace clustersim;

TEST_CASE("an interrupt while an output is being written removes its temporary and exits 143", "[engine]") {
    // In a child process: the handlers installed, an output half-written through a temporary, then SIGTERM.
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("clustersim-interrupt-{}", ::getpid());
    std::filesystem::create_directories(dir);
    const auto target = dir / "timeline.json";
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        engine::install_interrupt_handlers();
        engine::AtomicFile file(target);
        file.stream() << "{\"traceEvents\": [";
        file.stream().flush();
        ::raise(SIGTERM);
        ::_exit(0);  // not reached
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 143);
    REQUIRE(std::filesystem::is_empty(dir));  // neither the output nor its temporary
    std::filesystem::remove_all(dir);
}

TEST_CASE("a committed output stays when the process is interrupted later", "[engine]") {
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("clustersim-interrupt2-{}", ::getpid());
    std::filesystem::create_directories(dir);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        engine::install_interrupt_handlers();
        engine::write_file_atomically(dir / "summary.json", "{}\n");
        ::raise(SIGINT);
        ::_exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WEXITSTATUS(status) == 130);
    REQUIRE(std::filesystem::exists(dir / "summary.json"));
    std::filesystem::remove_all(dir);
}
