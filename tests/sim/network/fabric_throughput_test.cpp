// Contention on real fabrics: an oversubscribed leaf-spine halves cross-leaf all-to-all throughput.
#include <catch2/catch.hpp>

#include "engine/simulator.h"
#include "sim/network/flow_network.h"
#include "topologies/topology_loader.h"

using namespace clustersim;

namespace {
/// Bytes per second of an all-to-all between the GPUs of the first and the last two nodes (each GPU sends
/// `bytes` to every GPU on the other leaf), measured from the start to the last arrival.
double cross_leaf_all_to_all(const std::string& oversubscription) {
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=4", "fabric=leaf-spine", "nodes_per_leaf=2",
                                                          "spines=4", "oversubscription=" + oversubscription});
    engine::Simulator sim;
    sim::FlowNetwork net(cluster, sim, sim::NetworkOptions{sim::SharingModel::max_min, false, false});
    const auto& gpus = cluster.gpus();
    const std::uint64_t bytes = 64 << 20;
    std::uint64_t total = 0;
    for (std::size_t a = 0; a < 16; ++a) {
        for (std::size_t b = 16; b < 32; ++b) {
            // Flow keys run over each sender's destinations, so ECMP spreads each GPU's flows over the spines.
            net.start_flow(gpus[a], gpus[b], bytes, b, 0);
            net.start_flow(gpus[b], gpus[a], bytes, a, 0);
            total += 2 * bytes;
        }
    }
    auto handler = [&](const engine::Event& e) { net.handle(e); };
    sim.run(handler);
    REQUIRE(net.delivered_bytes() == total);
    return static_cast<double>(total) / engine::to_seconds(sim.now());
}
}  // namespace

TEST_CASE("a 2:1 oversubscribed leaf-spine gives half the cross-leaf all-to-all throughput of 1:1",
          "[sim][network][slow]") {
    // 1:1: each leaf has 16 NICs x 50 GB/s down and 800 GB/s up; the NICs bound the traffic. 2:1: 400 GB/s up per
    // leaf, which becomes the bottleneck: throughput halves.
    const double full = cross_leaf_all_to_all("1");
    const double half = cross_leaf_all_to_all("2");
    REQUIRE(half / full == Approx(0.5).epsilon(0.02));
    // And the 1:1 figure is the NICs' line rate: 2 leaves x 800 GB/s (both directions).
    REQUIRE(full == Approx(1600e9).epsilon(0.02));
}
