// Validation of an OpGraph before replay: ids in range, deps within a rank and acyclic (stream order included),
// collectives issued by every member with the same kind and size, sends matched by receives in order.
#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "engine/error.h"
#include "traces/op_graph.h"

namespace clustersim::traces {

namespace {

[[noreturn]] void reject(const OpGraph& g, const std::string& message) {
    throw engine::InputError(engine::SourceLocation{g.source}, message);
}

void check_job_ranks(const OpGraph& g) {
    if (g.job_ranks.empty()) {
        if (g.job_rank_count != 0 && g.job_rank_count != g.rank_count)
            reject(g, fmt::format("the job has {} ranks but no job rank is given for the {} simulated ones",
                                  g.job_rank_count, g.rank_count));
        return;
    }
    if (g.job_ranks.size() != g.rank_count)
        reject(g, fmt::format("{} job ranks given for {} simulated ranks", g.job_ranks.size(), g.rank_count));
    auto sorted = g.job_ranks;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        reject(g, "two simulated ranks are the same job rank");
    if (sorted.back() >= g.job_rank_count)
        reject(g, fmt::format("job rank {} does not exist: the job has {} ranks", sorted.back(), g.job_rank_count));
}

void check_folded(const OpGraph& g, const Communicator& c) {
    // A folded communicator lists its whole membership by job rank; its simulated members are among them.
    auto members = c.job_members;
    std::sort(members.begin(), members.end());
    if (std::adjacent_find(members.begin(), members.end()) != members.end())
        reject(g, fmt::format("communicator '{}' lists a job rank twice", c.name));
    if (members.back() >= g.job_size())
        reject(g, fmt::format("communicator '{}' names job rank {}, but the job has {} ranks", c.name, members.back(),
                              g.job_size()));
    for (const RankId r : c.ranks) {
        if (!std::binary_search(members.begin(), members.end(), g.job_rank(r)))
            reject(g, fmt::format("communicator '{}': rank {} (job rank {}) is not among its job members", c.name,
                                  r.value, g.job_rank(r)));
    }
    // A member that is simulated must be listed among the simulated members (else nobody issues its part).
    for (std::uint32_t r = 0; r < g.rank_count; ++r) {
        const RankId rank{r};
        if (std::binary_search(members.begin(), members.end(), g.job_rank(rank)) &&
            std::find(c.ranks.begin(), c.ranks.end(), rank) == c.ranks.end())
            reject(g, fmt::format("communicator '{}': job rank {} is simulated (rank {}) but not among its ranks",
                                  c.name, g.job_rank(rank), r));
    }
}

void check_ids(const OpGraph& g) {
    if (g.rank_count == 0) reject(g, "the trace has no ranks");
    CLUSTERSIM_CHECK(g.durations.empty() || g.durations.size() == g.ops.size(), "{}: {} durations for {} ops", g.source,
                     g.durations.size(), g.ops.size());
    check_job_ranks(g);
    for (std::size_t s = 0; s < g.streams.size(); ++s) {
        if (g.streams[s].rank.value >= g.rank_count)
            reject(g, fmt::format("stream {} '{}' belongs to rank {}, but there are {} ranks", s, g.streams[s].name,
                                  g.streams[s].rank.value, g.rank_count));
    }
    // Each communicator's ranks, sorted: membership of a collective's rank by binary search (a scan per op of a
    // world-wide communicator was quadratic in the ranks).
    std::vector<std::vector<RankId>> sorted_ranks;
    sorted_ranks.reserve(g.comms.size());
    for (const Communicator& c : g.comms) {
        if (c.ranks.empty()) reject(g, fmt::format("communicator '{}' has no ranks", c.name));
        for (const RankId r : c.ranks) {
            if (r.value >= g.rank_count)
                reject(g, fmt::format("communicator '{}' names rank {}, but there are {} ranks", c.name, r.value,
                                      g.rank_count));
        }
        auto sorted = c.ranks;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
            reject(g, fmt::format("communicator '{}' lists a rank twice", c.name));
        if (c.folded()) check_folded(g, c);
        sorted_ranks.push_back(std::move(sorted));
    }
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        const OpId id = OpId::from_index(i);
        // (An op's rank is its stream's, whose rank was checked above.)
        if (op.stream.index() >= g.streams.size())
            reject(g, fmt::format("{}: unknown stream {}", g.describe(id), op.stream.value));
        const RankId rank = g.rank_of(op);
        if (op.is_communication() && op.comm().index() >= g.comms.size())
            reject(g, fmt::format("{}: unknown communicator {}", g.describe(id), op.comm().value));
        if (op.kind == OpKind::collective) {
            const auto& ranks = sorted_ranks[op.comm().index()];
            if (!std::binary_search(ranks.begin(), ranks.end(), rank))
                reject(g, fmt::format("{}: rank {} is not a member of '{}'", g.describe(id), rank.value,
                                      g.comms[op.comm().index()].name));
        }
        if (op.kind == OpKind::send || op.kind == OpKind::recv) {
            if (op.peer().value >= g.rank_count)
                reject(g, fmt::format("{}: peer rank {} does not exist", g.describe(id), op.peer().value));
            if (op.peer() == rank) reject(g, fmt::format("{}: a rank cannot send to itself", g.describe(id)));
        }
        for (const OpId d : g.deps(id)) {
            if (d.index() >= g.ops.size())
                reject(g, fmt::format("{}: depends on unknown op {}", g.describe(id), d.value));
            if (g.rank_of(d) != rank)
                reject(g, fmt::format(
                              "{}: depends on {}, on another rank (cross-rank order comes only from communication)",
                              g.describe(id), g.describe(d)));
        }
    }
}

void check_acyclic(const OpGraph& g) {
    // Stream order follows op ids, so a graph whose every dependency is an earlier op is in topological order:
    // acyclic (generators build graphs so). Otherwise, Kahn's algorithm over deps plus stream order (op -> next op
    // on the same stream), its dependents listed in one array (CSR).
    const std::size_t n = g.ops.size();
    bool ordered = true;
    for (std::size_t i = 0; i < n && ordered; ++i) {
        for (const OpId d : g.deps(OpId::from_index(i))) ordered = ordered && d.index() < i;
    }
    if (ordered) return;
    std::vector<std::uint32_t> indegree(n, 0), next_on_stream(n, UINT32_MAX);
    std::vector<std::uint32_t> last_on_stream(g.streams.size(), UINT32_MAX);
    std::vector<std::uint32_t> offsets(n + 1, 0);
    for (const OpId d : g.op_deps.ids()) ++offsets[d.index() + 1];
    for (std::size_t i = 0; i < n; ++i) offsets[i + 1] += offsets[i];
    std::vector<std::uint32_t> dependents(offsets[n]);
    std::vector<std::uint32_t> cursor(offsets.begin(), offsets.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
        auto& last = last_on_stream[g.ops[i].stream.index()];
        if (last != UINT32_MAX) {
            next_on_stream[last] = static_cast<std::uint32_t>(i);
            ++indegree[i];
        }
        last = static_cast<std::uint32_t>(i);
        for (const OpId d : g.deps(OpId::from_index(i))) {
            dependents[cursor[d.index()]++] = static_cast<std::uint32_t>(i);
            ++indegree[i];
        }
    }
    std::vector<std::uint32_t> ready;
    for (std::size_t i = 0; i < n; ++i) {
        if (indegree[i] == 0) ready.push_back(static_cast<std::uint32_t>(i));
    }
    std::size_t done = 0;
    while (!ready.empty()) {
        const std::uint32_t op = ready.back();
        ready.pop_back();
        ++done;
        auto release = [&](std::uint32_t next) {
            if (--indegree[next] == 0) ready.push_back(next);
        };
        if (next_on_stream[op] != UINT32_MAX) release(next_on_stream[op]);
        for (std::uint32_t k = offsets[op]; k < offsets[op + 1]; ++k) release(dependents[k]);
    }
    if (done == n) return;
    for (std::size_t i = 0; i < n; ++i) {
        if (indegree[i] > 0)
            reject(g,
                   fmt::format("dependency cycle through {} (its deps and the ops before it on its stream wait on it)",
                               g.describe(OpId::from_index(i))));
    }
}

void check_matching(const OpGraph& g) {
    // Collectives: per communicator, the k-th collective of every member must agree.
    const auto issued = collectives_by_member(g);                            // comm -> member index -> ops
    using P2pKey = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;  // src, dst, comm
    std::map<P2pKey, std::vector<OpId>> sends, recvs;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const Op& op = g.ops[i];
        const OpId id = OpId::from_index(i);
        if (op.kind == OpKind::send) {
            sends[{g.rank_of(op).value, op.peer().value, op.comm().value}].push_back(id);
        } else if (op.kind == OpKind::recv) {
            recvs[{op.peer().value, g.rank_of(op).value, op.comm().value}].push_back(id);
        }
    }
    for (std::size_t c = 0; c < g.comms.size(); ++c) {
        const auto& members = issued[c];
        std::size_t most = 0;
        for (const auto& m : members) most = std::max(most, m.size());
        for (std::size_t k = 0; k < most; ++k) {
            const OpId* first = nullptr;
            for (std::size_t m = 0; m < members.size(); ++m) {
                if (k >= members[m].size()) {
                    const auto issuer =
                        std::find_if(members.begin(), members.end(), [&](const auto& v) { return v.size() > k; });
                    reject(g, fmt::format(
                                  "collective #{} on '{}' ({}) is not issued by rank {}, a member (it issues only {})",
                                  k, g.comms[c].name, g.describe((*issuer)[k]), g.comms[c].ranks[m].value,
                                  members[m].size()));
                }
                const OpId id = members[m][k];
                if (!first) {
                    first = &members[m][k];
                    continue;
                }
                const Op& a = g.ops[first->index()];
                const Op& b = g.ops[id.index()];
                if (a.collective != b.collective)
                    reject(g, fmt::format("collective #{} on '{}': {} is {} but {} is {}", k, g.comms[c].name,
                                          g.describe(*first), collective_kind_name(a.collective), g.describe(id),
                                          collective_kind_name(b.collective)));
                if (a.bytes() != b.bytes() && !takes_member_sizes(a.collective))
                    reject(g,
                           fmt::format("collective #{} on '{}': {} has {} bytes but {} has {} (only all_gather "
                                       "and all_to_all take per-member sizes)",
                                       k, g.comms[c].name, g.describe(*first), a.bytes(), g.describe(id), b.bytes()));
            }
        }
    }
    for (const auto& [key, list] : sends) {
        const auto it = recvs.find(key);
        const std::size_t matched = it == recvs.end() ? 0 : it->second.size();
        if (matched < list.size())
            reject(g, fmt::format("{} has no matching recv on rank {}", g.describe(list[matched]), std::get<1>(key)));
        for (std::size_t k = 0; k < list.size(); ++k) {
            const OpId r = it->second[k];
            if (g.ops[list[k].index()].bytes() != g.ops[r.index()].bytes())
                reject(g, fmt::format("{} sends {} bytes but the matching {} expects {}", g.describe(list[k]),
                                      g.ops[list[k].index()].bytes(), g.describe(r), g.ops[r.index()].bytes()));
        }
    }
    for (const auto& [key, list] : recvs) {
        const auto it = sends.find(key);
        const std::size_t matched = it == sends.end() ? 0 : it->second.size();
        if (matched < list.size())
            reject(g, fmt::format("{} has no matching send on rank {}", g.describe(list[matched]), std::get<0>(key)));
    }
}

}  // namespace

void validate(const OpGraph& graph) {
    check_ids(graph);
    check_acyclic(graph);
    check_matching(graph);
}

}  // namespace clustersim::traces
