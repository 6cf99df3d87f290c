// Independent tasks run on several threads, their results handed on in task order: the outputs are those of a
// run on one thread, byte for byte, whatever the thread count and however the tasks interleave.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

namespace clustersim::engine {

/// Runs compute(i) for i in [0, count) on up to `threads` threads (the caller's among them), taking tasks in index
/// order, and calls emit(i, result) for each in index order, as soon as every task before it is done (one call at
/// a time, under a lock). A task that throws stops the handing out of new tasks; the results before the lowest
/// failing index are emitted, and that task's exception is rethrown (as a run on one thread would end).
template <class Result, class Compute, class Emit>
void run_ordered(std::size_t count, unsigned threads, Compute&& compute, Emit&& emit) {
    const std::size_t workers = std::min<std::size_t>(std::max(1U, threads), count);
    if (workers <= 1) {
        for (std::size_t i = 0; i < count; ++i) emit(i, compute(i));
        return;
    }
    std::vector<std::optional<Result>> done(count);
    std::atomic<std::size_t> next{0};
    std::mutex lock;
    std::size_t next_emit = 0;
    std::size_t failed = count;  // the lowest index that threw
    std::exception_ptr error;
    const auto work = [&] {
        while (true) {
            const std::size_t i = next.fetch_add(1);
            if (i >= count) return;
            try {
                Result r = compute(i);
                const std::lock_guard guard(lock);
                if (i > failed) continue;
                done[i].emplace(std::move(r));
                while (next_emit < failed && done[next_emit]) {
                    try {
                        emit(next_emit, *done[next_emit]);
                    } catch (...) {
                        failed = next_emit;  // (the lowest index not emitted: every task before it was)
                        error = std::current_exception();
                        next.store(count);
                        break;
                    }
                    done[next_emit].reset();
                    ++next_emit;
                }
            } catch (...) {
                const std::lock_guard guard(lock);
                if (i < failed) {
                    failed = i;
                    error = std::current_exception();
                }
                next.store(count);  // no new task
            }
        }
    };
    std::vector<std::thread> pool;
    for (std::size_t k = 1; k < workers; ++k) {
        try {
            pool.emplace_back(work);
        } catch (const std::system_error&) {
            break;  // (fewer threads: the same results)
        }
    }
    work();
    for (std::thread& t : pool) t.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace clustersim::engine
