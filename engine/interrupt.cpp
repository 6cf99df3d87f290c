// The handler only calls async-signal-safe functions (unlink, write, _exit) on a fixed table of paths.
#include "engine/interrupt.h"

#include <unistd.h>
#include <atomic>
#include <csignal>
#include <cstring>

namespace clustersim::engine {

namespace {

constexpr int slots = 32;
constexpr std::size_t path_size = 4096;
char paths[slots][path_size];
std::atomic<bool> used[slots];

void on_signal(int signal) {
    for (int k = 0; k < slots; ++k) {
        if (used[k].load()) ::unlink(paths[k]);
    }
    const char message[] = "clustersim: interrupted; outputs being written were removed\n";
    [[maybe_unused]] const auto written = ::write(STDERR_FILENO, message, sizeof(message) - 1);
    ::_exit(128 + signal);
}

}  // namespace

void install_interrupt_handlers() {
    struct sigaction action {};
    action.sa_handler = &on_signal;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, nullptr);
    ::sigaction(SIGTERM, &action, nullptr);
}

int register_temporary(const char* path) {
    if (std::strlen(path) >= path_size) return -1;
    for (int k = 0; k < slots; ++k) {
        if (used[k].load()) continue;
        std::strcpy(paths[k], path);
        used[k].store(true);
        return k;
    }
    return -1;
}

void release_temporary(int slot) {
    if (slot >= 0 && slot < slots) used[slot].store(false);
}

}  // namespace clustersim::engine
