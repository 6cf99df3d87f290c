// OpDeps: the dependencies of the ops that have some, against a plain list of lists, as appended and truncated.
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "traces/op_graph.h"

using clustersim::traces::OpDeps;
using clustersim::traces::OpId;

namespace {
void require_lists(const OpDeps& deps, const std::vector<std::vector<OpId>>& lists) {
    REQUIRE(deps.op_count() == lists.size());
    std::vector<OpId> all;
    std::uint32_t owners = 0;
    for (std::size_t i = 0; i < lists.size(); ++i) {
        INFO("op " << i);
        const auto got = deps.of(OpId::from_index(i));
        REQUIRE(std::vector<OpId>(got.begin(), got.end()) == lists[i]);
        REQUIRE(deps.has(OpId::from_index(i)) == !lists[i].empty());
        if (!lists[i].empty()) REQUIRE(deps.owner_index(OpId::from_index(i)) == owners);
        owners += !lists[i].empty();
        all.insert(all.end(), lists[i].begin(), lists[i].end());
    }
    REQUIRE(deps.owner_count() == owners);
    REQUIRE(deps.ids() == all);
}
}  // namespace

TEST_CASE("an op's dependencies are the lists appended, kept only for the ops that have some", "[traces]") {
    std::mt19937_64 rng(3);
    for (const unsigned one_in : {1U, 4U, 60U}) {
        std::vector<std::vector<OpId>> lists(1200);
        OpDeps deps;
        for (std::size_t i = 0; i < lists.size(); ++i) {
            if (i > 0 && rng() % one_in == 0) {
                for (std::uint64_t k = 0, count = 1 + rng() % 3; k < count; ++k)
                    lists[i].push_back(OpId::from_index(rng() % i));
            }
            deps.append(lists[i]);
        }
        require_lists(deps, lists);
        // Truncated and appended to again (as interleave_ranks rewrites a graph's tail).
        for (const std::size_t keep : {std::size_t{700}, std::size_t{512}, std::size_t{1}, std::size_t{0}}) {
            INFO("one in " << one_in << ", kept " << keep);
            OpDeps cut = deps;
            cut.truncate(keep);
            auto kept = std::vector<std::vector<OpId>>(lists.begin(), lists.begin() + static_cast<long>(keep));
            require_lists(cut, kept);
            for (std::size_t i = keep; i < lists.size(); ++i) {
                std::vector<OpId> list;
                if (i % 5 == 0 && i > 0) list.push_back(OpId::from_index(i - 1));
                cut.append(list);
                kept.push_back(list);
            }
            require_lists(cut, kept);
        }
    }
    // Truncating past the end keeps everything.
    OpDeps one;
    const std::vector<OpId> list = {OpId{0}};
    one.append({});
    one.append(list);
    one.truncate(5);
    require_lists(one, {{}, list});
}
