// Routing: shortest paths by (latency, then hops), with ECMP among equal-cost next hops. Paths never pass
// through a GPU (see forwards_traffic).
//
// Two ways to the same routes. Towards a GPU in a server whose links from outside all come from forwarding devices
// (switches, NICs: every preset but the switchless ring and torus), routing is two-level (router_two_level.cpp):
// a shortest path enters the server last through one of its entry links b -> x, so the distance from any u is
// min over entries of dist(u, b) + cost(b -> x) + (distance from x to the GPU inside the server). The distances to
// the boundary devices b (the leaf switches) are one Dijkstra each, shared by every GPU behind them, and those
// inside a server are a search of its few devices; next hops are then found where a route walks, and kept per
// destination. So routing costs devices x boundary devices, not devices x destinations, which kept 8,192 GPUs from
// running. Elsewhere, per-destination next-hop tables are computed once, on first use; the distances they come
// from are not kept (a table of them per destination is 8 bytes x devices x destinations). Both give the same
// equal-cost next hops in the same (link id) order, so the same routes.
//
// ECMP choice: at a device with n equal-cost next hops (ordered by LinkId), a flow with key k takes
// (k + salt(device)) mod n. Callers pass a hash of the flow (hashed ECMP, as switches do) or a running label
// (consecutive flows between two leaves then spread evenly over the spines, as NCCL's many queue pairs do).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/flat_map.h"
#include "engine/interned_sequences.h"
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
    /// Warms what routing towards `dst` uses (benchmarks time routing apart from it): its two-level state, or its
    /// table.
    void prepare(DeviceId dst) {
        if (!walked_to(dst)) (void)next_hops_to(dst);
    }
    /// Two-level routing on (the default) or off (tables for every destination: the reference the tests compare
    /// it with; both give the same routes).
    void set_two_level(bool on) { two_level_ = on; }
    /// Takes a link out of routing (failed) or puts it back; the tables are rebuilt on next use. Routes handed out
    /// before keep their links: callers re-route what crossed a failed link.
    void set_link_down(LinkId link, bool down);
    [[nodiscard]] bool link_down(LinkId link) const { return !down_.empty() && down_[link.index()] != 0; }
    /// Links out of routing now.
    [[nodiscard]] std::size_t links_down() const { return links_down_; }
    /// Distinct entry patterns of the destinations routed to so far (two-level routing on a fabric graph):
    /// destinations alike in where they sit share one, and the fabric's next hops towards them.
    [[nodiscard]] std::size_t entry_patterns() const { return entry_costs_.size(); }

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

    // Two-level routing (router_two_level.cpp).
    /// A server's links from outside and its devices; usable when every entry comes from a forwarding device.
    struct Server {
        std::vector<LinkId> entries;
        std::vector<LinkId> exits;              // links from the server's devices to outside
        std::vector<std::uint32_t> boundaries;  // the devices its entries come from, sorted, each once
        std::vector<DeviceId> devices;
        bool usable = false;
        /// Per device (by position) and exit k: the cost of leaving through exit k, inside the server and over
        /// the exit's link (devices x exits, row-major; built with the fabric graph).
        std::vector<std::int64_t> to_exit;
    };
    /// Towards one destination GPU: the distance to it inside its server (by position in the server), the cost
    /// through each entry (unreachable when that entry cannot be used), and the next hops found so far at the
    /// devices routes walked (sorted by device, each a range of `links`).
    struct Walked {
        bool ready = false;
        std::vector<std::int64_t> inside, through_entry;
        std::vector<std::uint32_t> entry_slot;  // per entry: its boundary device's distances
        /// On the fabric graph: the pattern of (entry_slot, through_entry less its least), entry by entry
        /// (entry_costs_), by which fabric devices away from the server share their next hops (shared_hops).
        std::uint32_t entry_pattern = engine::InternedSequences::none;
        std::vector<std::uint32_t> device, first, count;
        std::vector<LinkId> links;
    };
    void index_servers();
    /// The destination's two-level state, or nullptr when its server is not usable (then: tables).
    Walked* walked_to(DeviceId dst);
    /// The distances to the boundary device b (one Dijkstra, kept): of the fabric's devices on the fabric graph,
    /// or of every device when the servers are cabled to one another (router_fabric.cpp). Returns its slot.
    std::uint32_t distances_to_boundary(DeviceId b);
    /// u's distance to the boundary device whose distances are in `slot` (on the fabric graph: u a fabric device).
    std::int64_t to_boundary(DeviceId u, std::uint32_t slot) const;
    /// The fabric graph: the devices outside servers, their links, and a link per pair crossing a server.
    void build_fabric();
    /// The cost of leaving server `server` through each exit, from each of its devices (Server::to_exit).
    void compute_exits(Server& server);
    /// u's distance to dst by the two-level formula.
    std::int64_t distance(DeviceId u, DeviceId dst, const Walked& w);
    /// A fabric device's distance to dst (`distance`), kept by (dst, device) in fabric_distances_.
    std::int64_t fabric_distance(DeviceId x, DeviceId dst, const Walked& w);
    /// u's equal-cost next hops to dst: [first, first + count) in w.links (found and kept on first use).
    std::pair<std::uint32_t, std::uint32_t> walked_hops(DeviceId u, DeviceId dst, Walked& w);
    /// Appends u's equal-cost next hops to dst (links in id order) to `links`; returns how many.
    std::uint32_t append_next_hops(DeviceId u, DeviceId dst, const Walked& w, std::vector<LinkId>& links);
    /// A fabric device's next hops to dst when none of its links enters dst's server: they depend on dst only
    /// through its entry pattern (every candidate's distance is the pattern's plus dst's least entry cost), so they
    /// are kept by (entry pattern, device), shared by the destinations alike in where they sit.
    std::span<const LinkId> shared_hops(DeviceId u, DeviceId dst, const Walked& w);
    /// A server's exits towards one destination: the pattern of their distances, and the least of them.
    struct ExitPattern {
        std::uint32_t pattern = UINT32_MAX;
        std::int64_t least = unreachable;
    };
    /// The exit pattern of one server towards one destination, kept through one route's walk.
    struct PatternMemo {
        std::int32_t node = -1;
        ExitPattern exits;
    };
    /// u's equal-cost next hops to dst, wherever they are kept: by exit pattern (below) for a device in a server
    /// other than dst's on the fabric graph, else walked_hops. Valid until the next call.
    std::span<const LinkId> next_hops(DeviceId u, DeviceId dst, Walked& w, PatternMemo& memo);

    // Source-side routing by exit pattern (router_exit_patterns.cpp). On the fabric graph, a device u in a server
    // S other than dst's reaches dst through one of S's exits: its distance is min over exits k of (cost to leave
    // through k) + R[k], with R[k] the distance from exit k's far end (a fabric device) to dst. So u's next hops
    // depend on dst only through R, and not at all on a shift of R. R depends on S only through the far ends of
    // its exits: servers on the same leaves share it (every server of a leaf group, on the presets), and
    // destinations alike in where they sit share the shifted R (a "pattern"; a few dozen on a rail-optimized
    // fabric). Next hops are kept by (pattern, u): far fewer than by (dst, u), which grew with every pair of GPUs
    // that ever exchanged traffic.
    static constexpr std::uint32_t no_pattern = UINT32_MAX;
    /// The pattern of server `node`'s exits towards dst.
    ExitPattern exit_pattern(std::int32_t node, DeviceId dst, const Walked& w);
    /// The least over v's server's exits k of (the cost to leave v through k) + (the pattern's entry for k): v's
    /// distance to the destination minus the pattern's least.
    [[nodiscard]] std::int64_t through_exits(DeviceId v, std::uint32_t pattern) const;
    /// u's next hops under `pattern` (u in a server other than the destination's).
    std::span<const LinkId> pattern_hops(DeviceId u, std::uint32_t pattern);
    void index_exit_sets();

    const Cluster& cluster_;
    bool two_level_ = true;
    bool servers_indexed_ = false;
    std::vector<Server> servers_;                    // by node
    std::vector<std::uint32_t> position_in_server_;  // by device
    std::vector<std::uint32_t> boundary_slot_;       // by device: its distance table in boundary_distances_
    std::vector<std::vector<std::int64_t>> boundary_distances_;
    /// Every link between servers has a fabric device (outside servers) at one end: distances between fabric
    /// devices then come from the fabric graph, where a server is only the cost of crossing it.
    bool fabric_only_ = false;
    std::vector<std::uint32_t> fabric_index_;  // by device: its index among the fabric devices, or UINT32_MAX
    std::vector<DeviceId> fabric_devices_;
    std::vector<std::uint32_t> fabric_in_offsets_, fabric_in_src_;  // in-edges per fabric device (CSR)
    std::vector<std::int64_t> fabric_in_cost_;
    std::vector<Walked> walked_;                        // by destination
    std::vector<std::uint32_t> exit_set_;               // by node: its exits' far ends, as an index in exit_far_ends_
    std::vector<std::vector<DeviceId>> exit_far_ends_;  // distinct lists of exits' far ends
    engine::FlatMap64<ExitPattern> exit_patterns_;      // by (destination << 32 | exit set)
    std::uint64_t last_exit_key_ = UINT64_MAX;          // the last one looked up (a leaf's downlinks: one set)
    ExitPattern last_exit_pattern_;
    engine::InternedSequences exit_costs_;   // by pattern: R - min R
    engine::InternedSequences entry_costs_;  // by entry pattern: (slot, cost through the entry less the least) pairs
    engine::FlatMap64<std::uint64_t> shared_hops_;  // by (entry pattern << 32 | device): first << 32 | count
    std::vector<LinkId> shared_links_;
    engine::FlatMap64<std::uint64_t> pattern_hops_;  // by (pattern << 32 | device): first << 32 | count
    std::vector<LinkId> pattern_links_;
    std::vector<std::int64_t> pattern_scratch_;
    engine::FlatMap64<std::int64_t> fabric_distances_;  // by (destination << 32 | fabric device)
    std::vector<NextHops> next_hop_cache_;              // by destination; empty until needed
    std::vector<std::int64_t> scratch_;                 // distances while a table is built
    std::size_t tables_ = 0;                            // next-hop tables built
    std::vector<std::uint8_t> down_;                    // by link, once some link failed
    std::size_t links_down_ = 0;
};

}  // namespace clustersim::topo
