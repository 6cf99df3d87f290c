// The shape of a class of identical flows (flow_network.h) whose members share links: the distinct links its
// members' routes cross, how many members cross each, and which. Built once per distinct set of routes and shared
// by every class with those routes: the steps of a pipelined collective repeat their routes chunk after chunk and
// call after call (at `bench_replay 128 1000`, 94% of the classes with shared links), so a class that forms finds its
// shape instead of counting its links and listing their members again.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "topologies/link.h"

namespace clustersim::sim::network {

struct ClassShape {
    struct LinkCount {
        std::uint32_t link;
        std::uint32_t count;
    };
    /// The members' routes, one after the other, and where each starts (member k's hops are [offsets[k],
    /// offsets[k + 1])): what the shape is of.
    std::vector<topo::LinkId> route;
    std::vector<std::uint32_t> offsets;
    /// The distinct links, in the order the members first cross them, each with the number of members crossing it:
    /// what the class attaches and what the solver walks and sums (FlowNetwork::for_each_link).
    std::vector<LinkCount> links;
    /// The same links by ascending id, each with where its members start in `crossing` (they end where the next
    /// link's start; the last link's at the end): the exactness check reads links in the order that gives each
    /// member its bottleneck, the lowest id that holds it, and stops once every member has one.
    struct LinkMembers {
        std::uint32_t link;
        std::uint32_t first;
    };
    std::vector<LinkMembers> by_id;
    std::vector<std::uint32_t> crossing;  // member indices, link by link in by_id's order, each in members' order
};

/// The shapes of the classes formed so far, found by their routes (compared in full, never by hash alone). A pure
/// cache: a shape depends only on the routes, so what it holds changes the cost, not the result. Bounded: when
/// the shapes it keeps would exceed `max_hops` hops in all it forgets them all (classes keep theirs).
class ClassShapes {
public:
    explicit ClassShapes(std::size_t link_count, std::size_t max_hops = std::size_t{1} << 21);

    /// The shape of members' routes `route` (member k's: [offsets[k], offsets[k + 1])), built if not kept; none
    /// when no two members share a link (a ring step: the class is walked as one route).
    std::shared_ptr<const ClassShape> shape_of(std::span<const topo::LinkId> route,
                                               std::span<const std::uint32_t> offsets);
    [[nodiscard]] std::uint64_t built() const { return built_; }
    [[nodiscard]] std::uint64_t found() const { return found_; }

private:
    [[nodiscard]] bool shared(std::span<const topo::LinkId> route);
    std::shared_ptr<const ClassShape> build(std::span<const topo::LinkId> route,
                                            std::span<const std::uint32_t> offsets);

    std::unordered_map<std::uint64_t, std::shared_ptr<const ClassShape>> kept_;  // by a hash of route and offsets
    std::size_t kept_hops_ = 0;
    std::size_t max_hops_;
    std::vector<std::uint32_t> link_slot_;  // by link: its index, then its place, in the shape being built
    std::vector<std::uint32_t> link_seen_;  // by link: the pass (seen_stamp_) that met it
    std::uint32_t seen_stamp_ = 0;
    std::vector<std::uint64_t> link_bits_;  // by link, a bit: in the shape being built (all clear between builds)
    std::uint64_t built_ = 0;
    std::uint64_t found_ = 0;
};

}  // namespace clustersim::sim::network
