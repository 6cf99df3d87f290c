// Flows timed outside the network: added link by link (add_timed_spans, in any order across links) they leave every
// link's utilization exactly as added flow by flow (add_timed_flow), while no span ends past the bins.
#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include "engine/simulator.h"
#include "sim/network/flow_network.h"
#include "topologies/topology_loader.h"

using namespace clustersim;
using engine::Time;

namespace {

struct TimedFlow {
    std::vector<topo::LinkId> route;
    std::uint64_t bytes = 0;
    double rate = 0;
    Time start, drained;
};

/// Flows on routes of one to three of `links`, each starting after the last one on any of its links drained (as
/// the closed form claims links), some of them sending nothing, some starting as the one before drained.
std::vector<TimedFlow> random_flows(std::mt19937_64& rng, std::uint32_t links, Time from) {
    std::vector<TimedFlow> flows;
    std::vector<Time> free_at(links, from);
    for (int k = 0; k < 60; ++k) {
        TimedFlow f;
        const std::uint32_t hops = 1 + static_cast<std::uint32_t>(rng() % 3);
        while (f.route.size() < hops) {
            const auto l = topo::LinkId::from_index(rng() % links);
            if (std::find(f.route.begin(), f.route.end(), l) == f.route.end()) f.route.push_back(l);
        }
        Time ready = from;
        for (const topo::LinkId l : f.route) ready = std::max(ready, free_at[l.index()]);
        f.start = ready + Time{static_cast<std::int64_t>(rng() % 3 == 0 ? 0 : rng() % 5'000'000)};
        f.drained = f.start + Time{static_cast<std::int64_t>(rng() % 7 == 0 ? 0 : 1 + rng() % 20'000'000)};
        // Link rates, and slow ones whose fractions the network's fixed-point rates round.
        f.rate = rng() % 2 ? static_cast<double>(1 + rng() % 4) * 12.5e9 + static_cast<double>(rng() % 1000) * 0.37
                           : 1e3 + static_cast<double>(rng() % 1'000'000) * 1.234567e-3;
        f.bytes = 1 + rng() % (64 << 20);
        for (const topo::LinkId l : f.route) free_at[l.index()] = f.drained;
        flows.push_back(f);
    }
    return flows;
}

}  // namespace

TEST_CASE("timed flows added link by link leave each link as added flow by flow", "[sim][network]") {
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=1"});
    const std::uint32_t links = 12;
    std::mt19937_64 rng(7);
    for (int run = 0; run < 20; ++run) {
        engine::Simulator sim_a, sim_b;
        sim::FlowNetwork by_flow(cluster, sim_a), by_link(cluster, sim_b);
        // The bins widened ahead to cover 16 ms by a flow on another link, so that what follows fits.
        const auto wide = topo::LinkId::from_index(links);
        const Time horizon{16'000'000'000};
        for (sim::FlowNetwork* net : {&by_flow, &by_link}) {
            net->hold_link(wide);
            net->add_timed_flow(std::span(&wide, 1), 1, 1e9, Time{0}, horizon);
            net->release_link(wide);  // (its span ends, and is binned, as the link is released)
        }
        const Time origin{static_cast<std::int64_t>(rng() % 1'000'000)};
        const auto flows = random_flows(rng, links, Time{0});
        Time last{0};
        for (const TimedFlow& f : flows) last = std::max(last, origin + f.drained);
        REQUIRE(last < horizon);
        REQUIRE(by_link.timed_spans_fit(last));
        REQUIRE_FALSE(by_link.timed_spans_fit(horizon * 2));
        for (std::uint32_t l = 0; l < links; ++l) {
            by_flow.hold_link(topo::LinkId::from_index(l));
            by_link.hold_link(topo::LinkId::from_index(l));
        }
        std::uint64_t bytes = 0;
        for (const TimedFlow& f : flows) {
            by_flow.add_timed_flow(f.route, f.bytes, f.rate, origin + f.start, origin + f.drained);
            bytes += f.bytes;
        }
        // Link by link, the links in reverse order.
        for (std::uint32_t l = links; l-- > 0;) {
            std::vector<sim::network::TimedSpan> spans;
            for (const TimedFlow& f : flows) {
                if (std::find(f.route.begin(), f.route.end(), topo::LinkId::from_index(l)) != f.route.end())
                    spans.push_back({f.start, f.drained, sim::FlowNetwork::carried_rate(f.rate)});
            }
            by_link.add_timed_spans(topo::LinkId::from_index(l), spans, origin);
        }
        by_link.count_timed_flows(bytes, flows.size());
        for (std::uint32_t l = 0; l < links; ++l) {
            by_flow.release_link(topo::LinkId::from_index(l));
            by_link.release_link(topo::LinkId::from_index(l));
        }
        REQUIRE(by_link.flows_completed() == by_flow.flows_completed());
        REQUIRE(by_link.delivered_bytes() == by_flow.delivered_bytes());
        REQUIRE(by_link.started_bytes() == by_flow.started_bytes());
        const sim::LinkUtilization& a = by_flow.utilization();
        const sim::LinkUtilization& b = by_link.utilization();
        REQUIRE(a.bin_width() == b.bin_width());
        for (std::uint32_t l = 0; l < links; ++l) {
            REQUIRE(a.carried(l) == b.carried(l));
            REQUIRE(a.bytes(l) == b.bytes(l));  // (to the bit: the same additions in the same order)
            REQUIRE(a.peak_rate(l) == b.peak_rate(l));
            REQUIRE(a.rate(l) == b.rate(l));
            const auto bins_a = a.bins(l), bins_b = b.bins(l);
            REQUIRE(std::equal(bins_a.begin(), bins_a.end(), bins_b.begin(), bins_b.end()));
        }
    }
}
