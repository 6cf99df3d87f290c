// Flows timed outside the network (timed_flow.h): what they leave on their links (counts, link utilization), and
// the links' holds.
#include <algorithm>

#include "sim/network/flow_network.h"

namespace clustersim::sim {

using engine::Time;

void FlowNetwork::time_link(std::uint32_t link, Time& drop, double carried, Time start, Time drained) {
    // A flow that starts on a link as the one before it left continues its span (as the update of that instant
    // would see it), so the rate drops to 0 only when the next flow comes later, or when the link is released.
    if (drop.count() < 0 || drop != start || utilization_.rate(link) != carried) {
        if (drop.count() >= 0) utilization_.set_rate(link, drop, 0);
        utilization_.set_rate(link, start, carried);
    }
    drop = drained;
}

void FlowNetwork::add_timed_flow(std::span<const topo::LinkId> route, std::uint64_t bytes, double rate, Time start,
                                 Time drained) {
    count_timed_flows(bytes, 1);
    if (!options_.record_link_utilization || drained == start) return;
    // What the link's rate sum would read with this flow alone on it.
    const double carried = carried_rate(rate);
    for (const topo::LinkId l : route) time_link(l.value, timed_[l.index()].drop, carried, start, drained);
}

void FlowNetwork::add_timed_spans(topo::LinkId link, std::span<const network::TimedSpan> spans, Time origin) {
    if (!options_.record_link_utilization) return;
    // Its pending drop held in a local while its spans are added (the utilization's writes cannot change it).
    const std::uint32_t l = link.value;
    Time drop = timed_[l].drop;
    for (const network::TimedSpan& s : spans) {
        if (s.drained == s.start) continue;  // (as add_timed_flow: a flow that sends nothing leaves nothing)
        time_link(l, drop, s.rate, origin + s.start, origin + s.drained);
    }
    timed_[l].drop = drop;
}

void FlowNetwork::count_timed_flows(std::uint64_t bytes, std::uint64_t flows) {
    started_bytes_ += bytes;
    delivered_bytes_ += bytes;
    completed_ += flows;
}

void FlowNetwork::release_link(topo::LinkId link) {
    TimedLink& timed = timed_[link.index()];
    if (--timed.holds > 0) return;
    Time& drop = timed.drop;
    if (drop.count() >= 0) utilization_.set_rate(link.value, drop, 0);
    drop = Time{-1};
}

}  // namespace clustersim::sim
