// Taps: what the flows of one caller do to the links they cross, recorded while no other flow shares those links,
// and given to the links again later without the flows (flow_network.h, "Taps"; the replay's repeated calls,
// sim/replay/replay_repeats.cpp).
//
// Why a record can stand for flows: max-min fair rates decompose over the components of flows coupled by shared
// links, so flows that share no link with any other flow have the rates they would have alone; their drains and
// arrivals follow from their own starts, sizes and routes. A tap checks the "no other flow" part as flows start: a
// flow started on a link another tap (or no tap) started a flow on at the same instant, a link that already carried
// a flow or was held when the tap first used it, and any other flow starting on a tapped link spoil the tap.
#include <algorithm>

#include "sim/network/flow_network.h"

namespace clustersim::sim {

using engine::Time;

void FlowNetwork::enable_taps() {
    if (!link_taps_.empty()) return;
    link_taps_.assign(links_.size(), LinkTap{});
    taps_since_ = sim_.now();
}

std::uint32_t FlowNetwork::open_tap() {
    enable_taps();
    std::uint32_t tap;
    if (!free_taps_.empty()) {
        tap = free_taps_.back();
        free_taps_.pop_back();
    } else {
        tap = static_cast<std::uint32_t>(taps_.size());
        taps_.emplace_back();
    }
    taps_[tap] = TapRecord{};
    taps_[tap].valid = sim_.now() != taps_since_;
    return tap;
}

void FlowNetwork::note_start(std::span<const topo::LinkId> route, std::uint32_t tap, std::uint64_t bytes) {
    const Time now = sim_.now();
    if (tap != no_tap) {
        ++taps_[tap].flows;
        taps_[tap].bytes += bytes;
    }
    for (const topo::LinkId link : route) {
        LinkTap& t = link_taps_[link.index()];
        if (t.started == now && t.started_by != tap) {  // two callers start flows on it at one instant
            spoil_tap(t.started_by);
            spoil_tap(tap);
        }
        t.started = now;
        t.started_by = tap;
        if (t.tap == tap) continue;  // (its own link, or no tap on a link no tap uses)
        if (t.tap != no_tap) {       // a flow on another tap's link
            spoil_tap(t.tap);
            spoil_tap(tap);
            continue;
        }
        // The tap's first flow on the link: it must find the link empty (a flow still sending, or a hold).
        if (links_[link.index()].flow_count() > 0 || timed_[link.index()].holds > 0) spoil_tap(tap);
        t.tap = tap;
        taps_[tap].links.push_back(link);
        taps_[tap].delays.push_back(link_delay_units_[link.index()]);
    }
}

void FlowNetwork::spoil_tap(std::uint32_t tap) {
    if (tap == no_tap || !taps_[tap].valid) return;
    TapRecord& record = taps_[tap];
    record.valid = false;
    std::vector<TapStep>().swap(record.steps);  // (what it kept is of no use now)
}

void FlowNetwork::close_tap(std::uint32_t tap, Time origin, TapRecord& out) {
    TapRecord& record = taps_[tap];
    for (std::size_t i = 0; i < record.links.size(); ++i) {
        const std::uint32_t l = record.links[i].value;
        link_taps_[l].tap = no_tap;
        record.delays[i] = link_delay_units_[l] - record.delays[i];
    }
    for (TapStep& step : record.steps) step.at = step.at - origin;
    out = std::move(record);
    taps_[tap] = TapRecord{};
    free_taps_.push_back(tap);
}

bool FlowNetwork::links_free(std::span<const topo::LinkId> links) const {
    const Time now = sim_.now();
    return std::all_of(links.begin(), links.end(), [&](topo::LinkId link) {
        const std::uint32_t l = link.value;
        const bool untapped = link_taps_.empty() || (link_taps_[l].tap == no_tap && link_taps_[l].started != now);
        return untapped && links_[l].flow_count() == 0 && timed_[l].holds == 0 &&
               (!options_.record_link_utilization || utilization_.rate(l) == 0);
    });
}

void FlowNetwork::replay_tap(const TapRecord& record, Time origin) {
    // (Integer sums: the ones the flows would have left, to the bit.)
    for (std::size_t i = 0; i < record.links.size(); ++i)
        link_delay_units_[record.links[i].index()] += record.delays[i];
    if (options_.record_link_utilization) {
        for (const TapStep& step : record.steps) utilization_.set_rate(step.link, origin + step.at, step.rate);
    }
    started_bytes_ += record.bytes;
    delivered_bytes_ += record.bytes;
    completed_ += record.flows;
}

}  // namespace clustersim::sim
