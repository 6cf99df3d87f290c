// engine::run_ordered: tasks on several threads, results handed on in task order, the lowest failure rethrown.
#include <catch2/catch.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/ordered_parallel.h"

using clustersim::engine::run_ordered;

namespace {
/// Later tasks finish first (each sleeps less than the one before), so emitting in order must wait for them.
std::size_t slow_first(std::size_t i, std::size_t count) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2 * (count - i)));
    return i * i;
}
}  // namespace

TEST_CASE("run_ordered emits every result in task order, whatever the threads", "[engine]") {
    for (const unsigned threads : {1U, 2U, 3U, 8U, 100U}) {
        std::vector<std::size_t> order, values;
        run_ordered<std::size_t>(
            10, threads, [](std::size_t i) { return slow_first(i, 10); },
            [&](std::size_t i, std::size_t v) {
                order.push_back(i);
                values.push_back(v);
            });
        REQUIRE(order == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
        REQUIRE(values == std::vector<std::size_t>{0, 1, 4, 9, 16, 25, 36, 49, 64, 81});
    }
    std::size_t emitted = 0;
    run_ordered<int>(
        0, 4, [](std::size_t) { return 1; }, [&](std::size_t, int) { ++emitted; });
    REQUIRE(emitted == 0);
}

TEST_CASE("run_ordered stops at the lowest failing task, as one thread would", "[engine]") {
    // Tasks 3 and 6 throw; task 6 fails first in time (3 sleeps longer). One thread would emit 0-2 and throw 3's.
    for (const unsigned threads : {1U, 2U, 4U, 8U}) {
        std::vector<std::size_t> order;
        const auto compute = [](std::size_t i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(i == 3 ? 30 : 1));
            if (i == 3 || i == 6) throw std::runtime_error("task " + std::to_string(i));
            return i;
        };
        REQUIRE_THROWS_WITH(
            run_ordered<std::size_t>(8, threads, compute, [&](std::size_t i, std::size_t) { order.push_back(i); }),
            "task 3");
        REQUIRE(order == std::vector<std::size_t>{0, 1, 2});
    }
}

TEST_CASE("run_ordered stops at an emit that throws, with the rows before it emitted", "[engine]") {
    for (const unsigned threads : {1U, 3U}) {
        std::vector<std::size_t> order;
        REQUIRE_THROWS_WITH(run_ordered<std::size_t>(
                                6, threads, [](std::size_t i) { return slow_first(i, 6); },
                                [&](std::size_t i, std::size_t) {
                                    if (i == 2) throw std::runtime_error("emit 2");
                                    order.push_back(i);
                                }),
                            "emit 2");
        REQUIRE(order == std::vector<std::size_t>{0, 1});
    }
}
