// The flow-level network against closed forms: idle paths, fair sharing, re-sharing, a textbook max-min
// allocation, conservation of bytes, and the contention-free mode.
#include <random>

#include <catch2/catch.hpp>

#include "tests/sim/network/network_fixture.h"

using namespace clustersim;
using namespace std::chrono_literals;
using engine::Time;
using testing::NetworkFixture;

namespace {
/// Options that keep a FlowRecord per flow (off by default).
sim::NetworkOptions recording() {
    sim::NetworkOptions options;
    options.record_flows = true;
    return options;
}
}  // namespace

TEST_CASE("one flow on an idle path ends at latency plus bytes over the bottleneck", "[sim][network]") {
    // gpu a -(400 GB/s, 100 ns)- switch -(50 GB/s, 1 us)- switch -(400 GB/s, 100 ns)- gpu b
    // 3 MB: 1.2 us latency + 3e6 B / 50e9 B/s = 60 us -> 61.2 us exactly.
    NetworkFixture f;
    const auto a = f.gpu("a"), b = f.gpu("b");
    const auto s1 = f.network_switch("s1"), s2 = f.network_switch("s2");
    f.cluster.add_cable(a, s1, 400e9, 100ns, topo::LinkKind::nvlink);
    f.cluster.add_cable(s1, s2, 50e9, 1us, topo::LinkKind::infiniband);
    f.cluster.add_cable(s2, b, 400e9, 100ns, topo::LinkKind::nvlink);
    f.start(recording());
    f.net->start_flow(a, b, 3'000'000, 0, 7);
    f.run();
    REQUIRE(f.arrival_of(7) == Time{61'200'000});
    REQUIRE(f.net->records().at(0).contention_delay() == Time{0});
    REQUIRE(f.net->delivered_bytes() == 3'000'000);
}

TEST_CASE("two flows on one link each get half, and a third arriving mid-way re-shares", "[sim][network]") {
    // One 120 GB/s link, 1 us latency. A and B (1.2 MB) start at 0 with 60 GB/s each; at 10 us each has 600 kB
    // left when C (1.2 MB) joins: 40 GB/s each. A and B drain at 10 + 600e3/40e9 = 25 us, arrive at 26 us.
    // C has 600 kB left at 25 us, alone at 120 GB/s: drains at 30 us, arrives at 31 us.
    NetworkFixture f;
    const auto a = f.gpu("a"), b = f.gpu("b");
    f.cluster.add_cable(a, b, 120e9, 1us, topo::LinkKind::nvlink);
    f.start(recording());
    const auto fa = f.net->start_flow(a, b, 1'200'000, 0, 1);
    f.net->start_flow(a, b, 1'200'000, 0, 2);
    f.run(Time{0});
    REQUIRE(f.net->rate(fa) == 60e9);
    f.run(10us);
    f.net->start_flow(a, b, 1'200'000, 0, 3);
    f.run(10us);
    REQUIRE(f.net->rate(fa) == 40e9);
    f.run();
    REQUIRE(f.arrival_of(1) == 26us);
    REQUIRE(f.arrival_of(2) == 26us);
    REQUIRE(f.arrival_of(3) == 31us);
    // Alone, C would have taken 1 us + 10 us; it took 21 us: 10 us of contention.
    REQUIRE(f.net->records().at(2).contention_delay() == 10us);
    REQUIRE(f.net->delivered_bytes() == 3'600'000);
}

TEST_CASE("links faster than the demand bound's clamp (2^40 B/s) still share, and a flow alone skips the solver",
          "[sim][network]") {
    // One 4 PB/s link, 1 us latency. A (8 GB) starts alone: 4e15 B/s, the solver skipped; at 1 us it has 4 GB left
    // when B (2 GB) joins: 2e15 B/s each. B drains at 2 us, arrives at 3 us; A has 2 GB left, alone again: drains
    // at 2.5 us, arrives at 3.5 us.
    NetworkFixture f;
    const auto a = f.gpu("a"), b = f.gpu("b");
    f.cluster.add_cable(a, b, 4e15, 1us, topo::LinkKind::nvlink);
    f.start(recording());
    const auto fa = f.net->start_flow(a, b, 8'000'000'000, 0, 1);
    f.run(Time{0});
    REQUIRE(f.net->rate(fa) == 4e15);
    REQUIRE(f.net->updates_at_caps() == 1);
    f.run(1us);
    f.net->start_flow(a, b, 2'000'000'000, 0, 2);
    f.run(1us);
    REQUIRE(f.net->rate(fa) == 2e15);
    f.run();
    REQUIRE(f.arrival_of(2) == 3us);
    REQUIRE(f.arrival_of(1) == Time{3'500'000});
}

TEST_CASE("a class held at its cap keeps its rate out of the fill: a flow on another of its links is not over-given",
          "[sim][network]") {
    // Switch chain s1 -L2(300)-> s2 -L3(400)-> s3 (GB/s); other cables 1000 GB/s unless said. At 0, class C starts:
    // c1 gC -(100)-> s1 -> s2 -> s3 -> gZ and c2 gX -(100)-> s4 -> gY, alike (same bytes, cap 100): no link can
    // bind, so C takes its caps without the solver. At 1 us, D (s1 -> s2, over L2) and E (s2 -> s3, over L3)
    // start. C is held (at its cap, not selected); L2 leaves 300 - 100 = 200 for D, L3 leaves 400 - 100 = 300
    // for E. (The fill once fixed C too when L2 filled, at L2's share 200, taking 200 from L3 a second time and
    // its count of unfixed flows: E then went to its cap, 400, beside C's 100 on a 400 GB/s link.)
    NetworkFixture f;
    const auto s1 = f.network_switch("s1"), s2 = f.network_switch("s2"), s3 = f.network_switch("s3"),
               s4 = f.network_switch("s4");
    const auto gc = f.gpu("gC"), gz = f.gpu("gZ"), gx = f.gpu("gX"), gy = f.gpu("gY");
    const auto gd = f.gpu("gD"), gdd = f.gpu("gDd"), ge = f.gpu("gE"), gee = f.gpu("gEe");
    f.cluster.add_cable(gc, s1, 100e9, 0ns, topo::LinkKind::pcie);
    f.cluster.add_cable(gz, s3, 1000e9, 0ns, topo::LinkKind::pcie);
    f.cluster.add_cable(gx, s4, 100e9, 0ns, topo::LinkKind::pcie);
    f.cluster.add_cable(gy, s4, 1000e9, 0ns, topo::LinkKind::pcie);
    f.cluster.add_cable(gd, s1, 1000e9, 0ns, topo::LinkKind::pcie);
    f.cluster.add_cable(gdd, s2, 1000e9, 0ns, topo::LinkKind::pcie);
    f.cluster.add_cable(ge, s2, 1000e9, 0ns, topo::LinkKind::pcie);
    f.cluster.add_cable(gee, s3, 1000e9, 0ns, topo::LinkKind::pcie);
    f.cluster.add_link(s1, s2, 300e9, 0ns, topo::LinkKind::infiniband);
    f.cluster.add_link(s2, s3, 400e9, 0ns, topo::LinkKind::infiniband);
    f.start();
    const auto c1 = f.net->start_flow(gc, gz, 100'000'000, 0, 1);
    const auto c2 = f.net->start_flow(gx, gy, 100'000'000, 0, 2);
    f.run(Time{0});
    REQUIRE(f.net->classes_formed() == 1);
    REQUIRE(f.net->updates_at_caps() == 1);
    REQUIRE(f.net->rate(c1) == 100e9);
    f.run(1us);
    const auto d = f.net->start_flow(gd, gdd, 100'000'000, 0, 3);
    const auto e = f.net->start_flow(ge, gee, 100'000'000, 0, 4);
    f.run(1us);
    CHECK(f.net->rate(c1) == 100e9);
    CHECK(f.net->rate(c2) == 100e9);
    CHECK(f.net->rate(d) == 200e9);
    CHECK(f.net->rate(e) == 300e9);
}

TEST_CASE("a textbook max-min example on three links gets the hand-computed rates", "[sim][network]") {
    // Switch chain s0 -L1(10)-> s1 -L2(12)-> s2 -L3(16)-> s3 (GB/s); GPU gi hangs off si by 1000 GB/s links.
    // Flows: f0 g0->g3 (L1 L2 L3), f1 g0->g1 (L1), f2 g1->g2 (L2), f3 g2->g3 (L3), f4 g1->g3 (L2 L3).
    // Fair shares: L1 10/2 = 5, L2 12/3 = 4, L3 16/3 = 5.33. L2 is the tightest: f0, f2, f4 get 4 each. Then
    // L1 leaves 10 - 4 = 6 for f1 and L3 leaves 16 - 4 - 4 = 8 for f3.
    NetworkFixture f;
    std::vector<topo::DeviceId> g, s;
    for (int i = 0; i < 4; ++i) s.push_back(f.network_switch("s" + std::to_string(i)));
    for (int i = 0; i < 4; ++i) g.push_back(f.gpu("g" + std::to_string(i)));
    for (int i = 0; i < 4; ++i) f.cluster.add_cable(g[i], s[i], 1000e9, 0ns, topo::LinkKind::pcie);
    f.cluster.add_link(s[0], s[1], 10e9, 0ns, topo::LinkKind::infiniband);
    f.cluster.add_link(s[1], s[2], 12e9, 0ns, topo::LinkKind::infiniband);
    f.cluster.add_link(s[2], s[3], 16e9, 0ns, topo::LinkKind::infiniband);
    f.start();
    const auto f0 = f.net->start_flow(g[0], g[3], 1'000'000, 0, 0);
    const auto f1 = f.net->start_flow(g[0], g[1], 1'000'000, 0, 1);
    const auto f2 = f.net->start_flow(g[1], g[2], 1'000'000, 0, 2);
    const auto f3 = f.net->start_flow(g[2], g[3], 1'000'000, 0, 3);
    const auto f4 = f.net->start_flow(g[1], g[3], 1'000'000, 0, 4);
    f.run(Time{0});
    REQUIRE(f.net->rate(f0) == 4e9);
    REQUIRE(f.net->rate(f1) == 6e9);
    REQUIRE(f.net->rate(f2) == 4e9);
    REQUIRE(f.net->rate(f3) == 8e9);
    REQUIRE(f.net->rate(f4) == 4e9);
}

TEST_CASE("the contention-free mode gives every flow its bottleneck bandwidth", "[sim][network]") {
    // Two 1 MB flows on one 100 GB/s link with 1 us latency: each alone would end at 1 + 10 = 11 us.
    NetworkFixture f;
    const auto a = f.gpu("a"), b = f.gpu("b");
    f.cluster.add_cable(a, b, 100e9, 1us, topo::LinkKind::nvlink);
    f.start(sim::NetworkOptions{sim::SharingModel::contention_free, true, false});
    f.net->start_flow(a, b, 1'000'000, 0, 1);
    f.net->start_flow(a, b, 1'000'000, 0, 2);
    f.run();
    REQUIRE(f.arrival_of(1) == 11us);
    REQUIRE(f.arrival_of(2) == 11us);
}

TEST_CASE("bytes are conserved: every link carries exactly the bytes of the flows routed over it", "[sim][network]") {
    // Random flows on a small switched network; integrate each link's piecewise-constant rate over time and
    // compare with the sum of the sizes of the flows whose routes cross it.
    NetworkFixture f;
    std::vector<topo::DeviceId> gpus;
    const auto core = f.network_switch("core");
    for (int i = 0; i < 6; ++i) {
        gpus.push_back(f.gpu("g" + std::to_string(i)));
        f.cluster.add_cable(gpus.back(), core, (10.0 + 5 * i) * 1e9, Time{100'000}, topo::LinkKind::pcie);
    }
    f.start();
    std::mt19937_64 rng(3);
    std::vector<double> expected(f.cluster.links().size(), 0);
    std::uint64_t total = 0;
    for (std::uint32_t i = 0; i < 200; ++i) {
        f.run(f.sim.now() + Time{static_cast<std::int64_t>(rng() % 3'000'000)});
        const auto src = gpus[rng() % gpus.size()];
        auto dst = gpus[rng() % gpus.size()];
        if (dst == src) dst = gpus[(src.index() + 1) % gpus.size()];
        const std::uint64_t bytes = 1 + rng() % 5'000'000;
        f.net->start_flow(src, dst, bytes, i, i);
        for (const auto l : f.net->router().route(src, dst, i)) expected[l.index()] += static_cast<double>(bytes);
        total += bytes;
    }
    f.run();
    REQUIRE(f.arrivals.size() == 200);
    REQUIRE(f.net->delivered_bytes() == total);
    REQUIRE(f.net->active_flows() == 0);
    for (std::size_t l = 0; l < f.cluster.links().size(); ++l) {
        const auto& used = f.net->utilization();
        const double carried = used.bytes(static_cast<std::uint32_t>(l));
        REQUIRE(used.rate(static_cast<std::uint32_t>(l)) == 0);
        // Each rate change rounds a finish time up by under 1 ps: a few bytes at most over the whole run.
        REQUIRE(carried == Approx(expected[l]).epsilon(1e-6).margin(1.0));
        // The time bins hold the same bytes.
        double binned = 0;
        for (const double b : used.bins(static_cast<std::uint32_t>(l))) binned += b;
        REQUIRE(binned == Approx(carried).epsilon(1e-9));
    }
}

TEST_CASE("a flow standing for several channels gets that many shares", "[sim][network]") {
    // One 120 GB/s link: a flow of weight 3 and one of weight 1 share it 3:1, 90 and 30 GB/s. Alone, the weight-3
    // flow gets the whole link, like a single flow.
    NetworkFixture f;
    const auto a = f.gpu("a"), b = f.gpu("b");
    f.cluster.add_cable(a, b, 120e9, 0ns, topo::LinkKind::nvlink);
    f.start();
    const auto route = f.net->router().route(a, b);
    const auto heavy = f.net->start_flow_on_route(a, b, route, 9'000'000, 1, 3);
    const auto light = f.net->start_flow(a, b, 3'000'000, 0, 2);
    f.run(Time{0});
    REQUIRE(f.net->rate(heavy) == 90e9);
    REQUIRE(f.net->rate(light) == 30e9);
    f.run();
    // Both drain at 100 us (9 MB / 90 GB/s = 3 MB / 30 GB/s).
    REQUIRE(f.arrival_of(1) == 100us);
    REQUIRE(f.arrival_of(2) == 100us);
}
