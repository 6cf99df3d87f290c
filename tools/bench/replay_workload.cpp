// Generated replay-benchmark graph: deterministic durations from a fixed hash, no randomness.
#include "tools/bench/replay_workload.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/hash.h"

namespace clustersim::bench {

traces::OpGraph replay_workload(const ReplayWorkloadConfig& c) {
    traces::OpGraph g;
    const std::uint32_t ranks = c.nodes * 8;
    g.rank_count = ranks;
    g.source = "replay benchmark";
    const std::uint32_t group = c.dp_group_nodes == 0 ? c.nodes : std::min(c.dp_group_nodes, c.nodes);
    const std::uint32_t groups = (c.nodes + group - 1) / group;
    std::vector<traces::CommId> tp(c.nodes), dp(std::size_t{8} * groups);
    for (std::uint32_t n = 0; n < c.nodes; ++n) {
        std::vector<traces::RankId> members;
        for (std::uint32_t k = 0; k < 8; ++k) members.push_back(traces::RankId{n * 8 + k});
        tp[n] = g.communicator(fmt::format("tp{}", n), members);
    }
    for (std::uint32_t q = 0; q < groups; ++q) {
        for (std::uint32_t k = 0; k < 8; ++k) {
            std::vector<traces::RankId> members;
            for (std::uint32_t n = q * group; n < std::min(c.nodes, (q + 1) * group); ++n)
                members.push_back(traces::RankId{n * 8 + k});
            dp[std::size_t{q} * 8 + k] =
                g.communicator(groups == 1 ? fmt::format("dp{}", k) : fmt::format("dp{}.{}", q, k), members);
        }
    }
    g.ops.reserve(static_cast<std::size_t>(ranks) * c.ops_per_rank);
    const std::uint32_t compute_name = g.intern("layer"), tp_name = g.intern("tp all-reduce"),
                        dp_name = g.intern("dp all-reduce");
    for (std::uint32_t r = 0; r < ranks; ++r) {
        const auto stream = g.stream(traces::RankId{r}, "main");
        std::uint32_t collectives = 0;
        for (std::uint32_t i = 0; i < c.ops_per_rank; ++i) {
            traces::Op op{stream, compute_name, traces::OpKind::compute, traces::KernelClass::gemm};
            engine::Time duration{-1};
            if ((i + 1) % c.collective_every == 0) {
                const bool data_parallel = ++collectives % c.dp_every == 0;
                op.kind = traces::OpKind::collective;
                op.name = data_parallel ? dp_name : tp_name;
                op.set_comm(data_parallel ? dp[std::size_t{r / 8 / group} * 8 + r % 8] : tp[r / 8]);
                op.set_bytes(data_parallel ? c.dp_bytes : c.tp_bytes);
            } else {
                // 50..500 us, the same for every rank of a node step so that the ranks stay in step.
                duration = engine::Time{50'000'000 + static_cast<std::int64_t>(engine::splitmix64(i) % 450'000'000)};
            }
            g.add(op, {}, duration);
        }
    }
    return g;
}

}  // namespace clustersim::bench
