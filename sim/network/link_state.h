// What the flow network keeps per link as flows attach and detach (flow_network.h): the link's entries (one per
// attached flow or class) and its sums, in one cache line; and the solver's state of a link during an update.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>

namespace clustersim::sim::network {

/// Rates summed in fixed point: units of 2^-32 bytes/s, each rate rounded down once (FlowNetwork::rate_units).
__extension__ typedef __int128 RateUnits;
/// Contention delay summed in fixed point: units of 2^-64 s (FlowNetwork::delay_units).
__extension__ typedef __int128 DelayUnits;

/// A flow's place on a link: its slot, the index of the link in what it attaches (a lone flow: its route's hop;
/// a class: its distinct links, ClassShape::links), and how many routes of its cross the link (a class: the
/// members that do; 1 otherwise). Sums over a link's flows count each entry `count` times.
struct LinkEntry {
    std::uint32_t flow;
    std::uint32_t place;  // its index among the links the flow attaches to (for_each_link's order)
    std::uint32_t count;
};

/// What a link keeps of its draining flows as they attach, detach and change, in one cache line (attaching
/// and detaching a flow touch it on every hop; the solver reads it for every link it visits).
struct alignas(64) LinkState {
    // Its capacity less the sum of its flows' rates, one per entry (a class: per member), in rate units, so that
    // the solver reads what a link's other flows leave without scanning them (and without a line more for the
    // capacity: the fill's starting residual is this plus the selected flows' part). Integer sums are exact (a
    // flow added and removed leaves nothing behind) and do not depend on the flows' order.
    RateUnits headroom = 0;
    // The sum of its flows' caps (cap x weight) in whole bytes/s, each flow's part rounded up (demand_units <=
    // capacity proves the link limits none of its flows: it cannot bind); integers, so adding and removing flows
    // is exact. A flow's part and the capacity are clamped at max_units (a flow clamped there is alone under a
    // capacity clamped too, or the link may bind), and unsigned sums are exact modulo 2^64, so below 2^24 flows on
    // a link the sum is the true one.
    std::uint64_t demand_units = 0;
    double capacity = 0;  // its bandwidth, unless degraded; 0 while down

    /// The draining flows on it (their entries, in the order attach and detach leave them).
    [[nodiscard]] std::span<const LinkEntry> flows() const { return {count <= 1 ? &one : many.get(), count}; }
    [[nodiscard]] std::uint32_t flow_count() const { return count; }
    void add_entry(const LinkEntry& e) {
        if (count == 0) {
            one = e;
            count = 1;
            return;
        }
        if (count + 1 > many_capacity) {
            const std::uint32_t grown = std::max({count + 1, many_capacity * 2, 4U});
            auto fresh = std::make_unique_for_overwrite<LinkEntry[]>(grown);
            if (count > 1) std::copy(many.get(), many.get() + count, fresh.get());
            many = std::move(fresh);
            many_capacity = grown;
        }
        if (count == 1) many[0] = one;
        many[count++] = e;
    }
    /// Removes the entry at `pos`, the last one taking its place; returns that entry (the one removed, if last).
    LinkEntry remove_entry(std::uint32_t pos) {
        LinkEntry& last = count <= 1 ? one : many[count - 1];
        const LinkEntry moved = last;
        (count <= 1 ? one : many[pos]) = moved;
        if (--count == 1) one = many[0];
        return moved;
    }

private:
    // The entries: the only one in place, in this line (a link a class or a flow has to itself is read without
    // a second line), and from two on all of them on the heap (the block kept as the link empties).
    std::unique_ptr<LinkEntry[]> many;
    std::uint32_t count = 0;

public:
    // The flows it holds below their caps (held_by): a link holding none cannot free any when flows leave it.
    std::uint32_t held_count = 0;

private:
    LinkEntry one{};
    std::uint32_t many_capacity = 0;
};
static_assert(sizeof(LinkState) == 64);

/// The max-min solver's state of a link (max_min_fair.cpp), in one line: an update's selection, its fill and the check
/// after the fill read it together.
struct alignas(64) LinkFill {
    // Capacity not yet given out in the fill in progress, in rate units: each flow fixed takes its rate rounded
    // as in the link's rate sum, so the residual is exact and does not depend on the order flows are fixed in
    // (a class and its members one by one leave the same residual, and so the same shares, to the bit).
    RateUnits residual = 0;
    // Sums over the selected flows' entries on it, each added as its flow is selected (in the order of
    // the update's selected flows, as a walk of their routes would add them; a handful of flows, not the link's many):
    // what the others hold is the link's rate sum less the selected flows' part. Valid in the epoch `summed` holds
    // (FlowNetwork::sums_of), read for the links of the component.
    RateUnits selected = 0;          // rates before the update
    double demand = 0;               // caps x weights
    std::uint32_t weight = 0;        // weights
    std::uint32_t held : 31 = 0;     // selected flows it held below their caps before the update (held_by)
    std::uint32_t held_out : 1 = 0;  // set by the fill: it also holds flows the update did not select
    std::uint32_t unfixed = 0;       // weight of its flows not yet fixed (0: left out of the fill)
    std::uint32_t mark = 0;          // epoch stamp: in the component of the update in progress
    // The only selected flow on it, as its place in the update's selected flows + 1, or many (0: none).
    std::uint32_t sole = 0;
    std::uint32_t summed = 0;  // the epoch its sums are of
    static constexpr std::uint32_t many = UINT32_MAX;
};
static_assert(sizeof(LinkFill) == 64);

}  // namespace clustersim::sim::network
