// Source-side routing by exit pattern (router.h): next hops of a device in a server other than the destination's,
// from the costs of reaching the destination through each of its server's exits, shifted to a least of 0.
#include <algorithm>
#include <map>

#include "engine/error.h"
#include "engine/hash.h"
#include "topologies/router.h"

namespace clustersim::topo {

void Router::index_exit_sets() {
    exit_set_.assign(servers_.size(), UINT32_MAX);
    exit_far_ends_.clear();
    exit_patterns_.clear();
    last_exit_key_ = UINT64_MAX;
    exit_costs_.clear();
    pattern_hops_.clear();
    pattern_links_.clear();
    std::map<std::vector<std::uint32_t>, std::uint32_t> sets;  // (once per index: servers, not routes)
    std::vector<std::uint32_t> far;
    for (std::size_t node = 0; node < servers_.size(); ++node) {
        far.clear();
        for (const LinkId l : servers_[node].exits) far.push_back(cluster_.link(l).dst.value);
        const auto [it, added] = sets.try_emplace(far, static_cast<std::uint32_t>(exit_far_ends_.size()));
        if (added) {
            auto& ends = exit_far_ends_.emplace_back();
            for (const std::uint32_t d : far) ends.push_back(DeviceId{d});
        }
        exit_set_[node] = it->second;
    }
}

Router::ExitPattern Router::exit_pattern(std::int32_t node, DeviceId dst, const Walked& w) {
    const std::uint32_t set = exit_set_[static_cast<std::size_t>(node)];
    const std::uint64_t key = (std::uint64_t{dst.value} << 32) | set;
    if (key == last_exit_key_) return last_exit_pattern_;
    if (const ExitPattern* known = exit_patterns_.find(key)) {
        last_exit_key_ = key;
        last_exit_pattern_ = *known;
        return *known;
    }
    // R: the far ends' distances to dst, shifted so that the least is 0 (unreachable ones stay so).
    auto& costs = pattern_scratch_;
    costs.clear();
    std::int64_t least = unreachable;
    for (const DeviceId far : exit_far_ends_[set]) {
        costs.push_back(fabric_distance(far, dst, w));
        least = std::min(least, costs.back());
    }
    for (std::int64_t& c : costs) {
        if (c != unreachable) c -= least;
    }
    // The same costs seen before (from another destination or exit set): the same pattern.
    const std::uint32_t pattern = exit_costs_.intern(costs);
    bool added = false;
    const ExitPattern found{pattern, least};
    exit_patterns_.find_or_insert(key, added) = found;
    return found;
}

std::int64_t Router::through_exits(DeviceId v, std::uint32_t pattern) const {
    const Server& from = servers_[static_cast<std::size_t>(cluster_.device(v).node)];
    const std::size_t exits = from.exits.size();
    const std::int64_t* row = from.to_exit.data() + position_in_server_[v.index()] * exits;
    const std::int64_t* rest = exit_costs_.at(pattern).data();
    std::int64_t best = unreachable;
    for (std::size_t k = 0; k < exits; ++k) {
        if (row[k] != unreachable && rest[k] != unreachable) best = std::min(best, row[k] + rest[k]);
    }
    return best;
}

std::span<const LinkId> Router::pattern_hops(DeviceId u, std::uint32_t pattern) {
    const std::uint64_t key = (std::uint64_t{pattern} << 32) | u.value;
    bool inserted = false;
    std::uint64_t& kept = pattern_hops_.find_or_insert(key, inserted);
    if (!inserted) return {pattern_links_.data() + (kept >> 32), static_cast<std::size_t>(kept & UINT32_MAX)};
    // walked_hops' test, in the same link order, with distances from R: a device of the server leaves through its
    // exits (Server::to_exit), and an exit's far end is R's entry for that exit. R is shifted by a constant, which
    // moves every candidate's cost alike.
    const std::int32_t node = cluster_.device(u).node;
    const Server& from = servers_[static_cast<std::size_t>(node)];
    const std::int64_t* rest = exit_costs_.at(pattern).data();
    std::int64_t best = unreachable;
    const auto first = static_cast<std::uint32_t>(pattern_links_.size());
    for (const LinkId l : cluster_.out_links(u)) {
        if (link_down(l)) continue;
        const Link& link = cluster_.link(l);
        // (Never the destination itself: it is in another server, and servers meet only at fabric devices.)
        if (!forwards_traffic(cluster_.device(link.dst))) continue;
        std::int64_t d;
        if (cluster_.device(link.dst).node == node) {
            d = through_exits(link.dst, pattern);
        } else {
            // Every link from a server's device to another node is one of its exits (index_servers).
            const auto k =
                static_cast<std::size_t>(std::find(from.exits.begin(), from.exits.end(), l) - from.exits.begin());
            CLUSTERSIM_CHECK(k < from.exits.size(), "link out of '{}' is not an exit of its server",
                             cluster_.device(u).name);
            d = rest[k];
        }
        if (d == unreachable) continue;
        const std::int64_t via = d + link_cost(link);
        if (via < best) {
            best = via;
            pattern_links_.resize(first);
        }
        if (via == best) pattern_links_.push_back(l);
    }
    const auto count = static_cast<std::uint32_t>(pattern_links_.size() - first);
    kept = (std::uint64_t{first} << 32) | count;
    return {pattern_links_.data() + first, count};
}

std::span<const LinkId> Router::next_hops(DeviceId u, DeviceId dst, Walked& w, PatternMemo& memo) {
    const std::int32_t node = cluster_.device(u).node;
    if (fabric_only_ && node >= 0 && node != cluster_.device(dst).node) {
        if (memo.node != node) memo = {node, exit_pattern(node, dst, w)};  // (a route may cross another server)
        return pattern_hops(u, memo.exits.pattern);
    }
    if (fabric_only_ && node < 0) {
        const auto& boundaries = servers_[static_cast<std::size_t>(cluster_.device(dst).node)].boundaries;
        if (!std::binary_search(boundaries.begin(), boundaries.end(), u.value)) return shared_hops(u, dst, w);
    }
    const auto [first, count] = walked_hops(u, dst, w);
    return {w.links.data() + first, count};
}

}  // namespace clustersim::topo
