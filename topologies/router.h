// Routing: shortest paths by (latency, then hops), with ECMP among equal-cost next hops. Paths never pass
// through a GPU (see forwards_traffic). Per-destination next-hop tables are computed once, on first use; the
// distances they come from are not kept (a table of them per destination is 8 bytes x devices x destinations).
//
// ECMP choice: at a device with n equal-cost next hops (ordered by LinkId), a flow with key k takes
// (k + salt(device)) mod n. Callers pass a hash of the flow (hashed ECMP, as switches do) or a running label
// (consecutive flows between two leaves then spread evenly over the spines, as NCCL's many queue pairs do).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/time.h"
#include "topologies/cluster.h"

namespace clustersim::topo {

class Router {
public:
    explicit Router(const Cluster& cluster);

    /// Appends the links from src to dst to `out` (nothing when src == dst). Returns whether some hop had a
    /// choice of equal-cost links (so another flow key may take another path). Throws InputError when dst
    /// cannot be reached from src.
    bool route(DeviceId src, DeviceId dst, std::uint64_t flow_key, std::vector<LinkId>& out);
    [[nodiscard]] std::vector<LinkId> route(DeviceId src, DeviceId dst, std::uint64_t flow_key = 0);

    /// Sum of link latencies along the shortest path (all equal-cost paths have the same latency).
    [[nodiscard]] engine::Time path_latency(DeviceId src, DeviceId dst);
    /// Links on the shortest path; nullopt when unreachable.
    [[nodiscard]] std::optional<int> path_hops(DeviceId src, DeviceId dst);

    /// Path cost: latency in ps times 2^16 plus hop count, so (latency, hops) compares lexicographically.
    static constexpr std::int64_t unreachable = INT64_MAX;
    /// Every device's path cost to `dst` into `dist` (resized to the device count); not cached.
    void compute_distances_to(DeviceId dst, std::vector<std::int64_t>& dist) const;
    /// Warms the routing table towards `dst` (benchmarks time routing apart from the tables).
    void prepare(DeviceId dst) { (void)next_hops_to(dst); }
    /// Takes a link out of routing (failed) or puts it back; the tables are rebuilt on next use. Routes handed out
    /// before keep their links: callers re-route what crossed a failed link.
    void set_link_down(LinkId link, bool down);
    [[nodiscard]] bool link_down(LinkId link) const { return !down_.empty() && down_[link.index()] != 0; }
    /// Links out of routing now.
    [[nodiscard]] std::size_t links_down() const { return links_down_; }

    /// The device of `kind` in `from`'s node with the cheapest path to `from` (ties: lowest id), searching only
    /// the node's own devices; invalid when there is none. Used to find a GPU's host CPU.
    [[nodiscard]] DeviceId nearest_in_node(DeviceId from, DeviceKind kind) const;

private:
    static std::int64_t link_cost(const Link& link) { return link.latency.count() * 65536 + 1; }

    /// Equal-cost next hops towards one destination, for every device (CSR, links in id order).
    struct NextHops {
        std::vector<std::uint32_t> offsets;
        std::vector<LinkId> links;
    };
    const NextHops& next_hops_to(DeviceId dst);

    const Cluster& cluster_;
    std::vector<NextHops> next_hop_cache_;  // by destination; empty until needed
    std::vector<std::int64_t> scratch_;     // distances while a table is built
    std::size_t tables_ = 0;                // next-hop tables built
    std::vector<std::uint8_t> down_;        // by link, once some link failed
    std::size_t links_down_ = 0;
};

}  // namespace clustersim::topo
