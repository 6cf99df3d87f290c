// Two-level routing against the per-destination tables: the same links, hop by hop, for every pair of devices and
// several flow keys, on every preset family, explicit fabrics with uneven latencies and after link failures.
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "engine/error.h"
#include "tests/test_support.h"
#include "topologies/router.h"
#include "topologies/topology_loader.h"

using namespace clustersim;
using testing::test_data;

namespace {

/// A route as text ("" when there is none), so that a difference shows which pair and which links.
std::string route_text(topo::Router& router, const topo::Cluster& c, topo::DeviceId src, topo::DeviceId dst,
                       std::uint64_t key) {
    std::vector<topo::LinkId> out;
    try {
        router.route(src, dst, key, out);
    } catch (const engine::InputError&) {
        return "no route";
    }
    std::string text = c.device(src).name;
    for (const auto l : out) text += " -> " + c.device(c.link(l).dst).name;
    return text;
}

/// Every ordered pair towards a device in a server (where two-level routing applies) and towards GPUs, keys 0..3.
/// `warm`: the two-level router routes every pair first, with every link up, so that what it keeps from before the
/// failures must be dropped.
void check_same_routes(const topo::Cluster& c, const std::vector<topo::LinkId>& down = {}, bool warm = false) {
    topo::Router two_level(c), tables(c);
    tables.set_two_level(false);
    if (warm) {
        for (const auto& dst : c.gpus()) {
            for (const auto& src : c.gpus()) (void)route_text(two_level, c, src, dst, 1);
        }
    }
    for (const auto l : down) {
        two_level.set_link_down(l, true);
        tables.set_link_down(l, true);
    }
    std::size_t compared = 0;
    for (std::size_t d = 0; d < c.devices().size(); ++d) {
        const auto dst = topo::DeviceId::from_index(d);
        if (c.device(dst).node < 0 && c.device(dst).kind != topo::DeviceKind::gpu) continue;
        for (std::size_t s = 0; s < c.devices().size(); ++s) {
            const auto src = topo::DeviceId::from_index(s);
            for (std::uint64_t key = 0; key < 4; ++key) {
                const std::string expected = route_text(tables, c, src, dst, key);
                INFO(c.description << ": " << c.device(src).name << " to " << c.device(dst).name << ", key " << key);
                REQUIRE(route_text(two_level, c, src, dst, key) == expected);
                ++compared;
            }
            REQUIRE(two_level.path_hops(src, dst) == tables.path_hops(src, dst));
        }
    }
    CHECK(compared > 0);
}

/// A link by the names of its ends.
topo::LinkId link_between(const topo::Cluster& c, const std::string& a, const std::string& b) {
    for (std::size_t l = 0; l < c.links().size(); ++l) {
        const auto& link = c.links()[l];
        if (c.device(link.src).name == a && c.device(link.dst).name == b) return topo::LinkId::from_index(l);
    }
    FAIL("no link " << a << " -> " << b);
    return {};
}

}  // namespace

TEST_CASE("two-level routing gives the tables' routes on every preset family", "[topologies][routing]") {
    const std::vector<std::pair<std::string, std::vector<std::string>>> presets = {
        {"dgx-h100", {"nodes=6", "nodes_per_leaf=2", "spines=2"}},
        {"dgx-h100", {"nodes=5", "fabric=leaf-spine", "nodes_per_leaf=2", "spines=3", "oversubscription=2"}},
        {"dgx-a100", {"nodes=2", "nodes_per_leaf=2", "spines=0"}},
        {"dgx1-v100", {"nodes=3"}},
        {"cloud-h100", {"nodes=3", "nodes_per_leaf=2"}},
        {"heterogeneous", {"mix=dgx-a100:2,dgx-h100:1", "nodes_per_leaf=2"}},
        {"multi-dc", {}},
        {"edge", {"devices=3"}},
        {"ring", {"gpus=6"}},
        {"torus", {}},
    };
    for (const auto& [preset, sets] : presets) {
        const topo::Cluster c = topo::load_topology(preset, sets);
        check_same_routes(c);
    }
    check_same_routes(topo::load_topology(test_data("topologies/cabled_ring4.yaml"), {}));
    check_same_routes(topo::load_topology(test_data("topologies/two_gpus.yaml"), {}));
}

TEST_CASE("two-level routing gives the tables' routes with failed links", "[topologies][routing]") {
    const topo::Cluster c = topo::load_topology("dgx-h100", {"nodes=4", "nodes_per_leaf=2", "spines=2"});
    // A leaf's uplink, a NIC's cable and a GPU's NVLink down: traffic takes the remaining spine, another rail, PCIe.
    const std::vector<topo::LinkId> down = {link_between(c, "leaf0.rail0", "spine0"),
                                            link_between(c, "leaf1.rail3", "n3.nic3"),
                                            link_between(c, "n1.gpu2", "n1.nvswitch")};
    check_same_routes(c, down);
    // The same links failing after every pair of GPUs was routed (next hops kept by destination and by the
    // pattern of a server's exits): what was kept is rebuilt without them.
    check_same_routes(c, down, true);
}

TEST_CASE("two-level routing gives the tables' routes on an uneven explicit fabric", "[topologies][routing]") {
    // Two servers behind two switches with unequal latencies, a shortcut between the servers through a third one's
    // switch, and a GPU of server 1 cabled to server 0 (that server then routes by tables).
    const std::string yaml = R"(
name: uneven
devices:
  - {name: a0, kind: gpu, gpu: H100, node: 0}
  - {name: a1, kind: gpu, gpu: H100, node: 0}
  - {name: asw, kind: nvswitch, node: 0}
  - {name: anic, kind: nic, node: 0}
  - {name: b0, kind: gpu, gpu: H100, node: 1}
  - {name: b1, kind: gpu, gpu: H100, node: 1}
  - {name: bsw, kind: nvswitch, node: 1}
  - {name: bnic, kind: nic, node: 1}
  - {name: bnic2, kind: nic, node: 1}
  - {name: c0, kind: gpu, gpu: H100, node: 2}
  - {name: csw, kind: nvswitch, node: 2}
  - {name: cnic, kind: nic, node: 2}
  - {name: cnic2, kind: nic, node: 2}
  - {name: s1, kind: network_switch}
  - {name: s2, kind: network_switch}
links:
  - {between: [a0, asw], bandwidth: 450 GB/s, latency: 150 ns, kind: nvlink}
  - {between: [a1, asw], bandwidth: 450 GB/s, latency: 150 ns, kind: nvlink}
  - {between: [asw, anic], bandwidth: 64 GB/s, latency: 250 ns, kind: pcie}
  - {between: [b0, bsw], bandwidth: 450 GB/s, latency: 150 ns, kind: nvlink}
  - {between: [b1, bsw], bandwidth: 450 GB/s, latency: 150 ns, kind: nvlink}
  - {between: [bsw, bnic], bandwidth: 64 GB/s, latency: 250 ns, kind: pcie}
  - {between: [bsw, bnic2], bandwidth: 64 GB/s, latency: 250 ns, kind: pcie}
  - {between: [c0, csw], bandwidth: 450 GB/s, latency: 150 ns, kind: nvlink}
  - {between: [csw, cnic], bandwidth: 64 GB/s, latency: 100 ns, kind: pcie}
  - {between: [csw, cnic2], bandwidth: 64 GB/s, latency: 100 ns, kind: pcie}
  - {between: [anic, s1], bandwidth: 50 GB/s, latency: 900 ns, kind: infiniband}
  - {between: [bnic, s1], bandwidth: 50 GB/s, latency: 300 ns, kind: infiniband}
  - {between: [bnic2, s2], bandwidth: 50 GB/s, latency: 300 ns, kind: infiniband}
  - {between: [anic, s2], bandwidth: 50 GB/s, latency: 300 ns, kind: infiniband}
  - {between: [cnic, s1], bandwidth: 50 GB/s, latency: 100 ns, kind: infiniband}
  - {between: [cnic2, s2], bandwidth: 50 GB/s, latency: 100 ns, kind: infiniband}
  - {between: [b1, a1], bandwidth: 50 GB/s, latency: 2000 ns, kind: nvlink}
)";
    const std::string path = testing::write_temp_file("uneven_fabric.yaml", yaml);
    const topo::Cluster c = topo::load_topology(path, {});
    check_same_routes(c);
    check_same_routes(c, {link_between(c, "anic", "s2")});
    // Without the GPU cable every link between servers meets a switch (the fabric graph); without a0's second
    // cable, s1 and s2 are joined only through servers b and c: a0 reaches b over s1 and through c or b itself.
    std::string switched = yaml;
    switched.erase(switched.find("  - {between: [b1, a1]"));
    const topo::Cluster d = topo::load_topology(testing::write_temp_file("switched_fabric.yaml", switched), {});
    check_same_routes(d);
    check_same_routes(d, {link_between(d, "anic", "s2")});
    check_same_routes(d, {link_between(d, "anic", "s2"), link_between(d, "bnic", "s1")});
}

TEST_CASE("two-level routing ties a crossing of a server with a path of switches, as the tables do",
          "[topologies][routing]") {
    // From a's NIC to b, over s1 and through server c, or over s3 and three switches: the same latency and hops, so
    // ECMP takes both; the fabric graph prices the crossing of c exactly or breaks the tie.
    const std::string yaml = R"(
name: crossing
devices:
  - {name: a0, kind: gpu, gpu: H100, node: 0}
  - {name: asw, kind: nvswitch, node: 0}
  - {name: anic, kind: nic, node: 0}
  - {name: b0, kind: gpu, gpu: H100, node: 1}
  - {name: bsw, kind: nvswitch, node: 1}
  - {name: bnic, kind: nic, node: 1}
  - {name: c0, kind: gpu, gpu: H100, node: 2}
  - {name: csw, kind: nvswitch, node: 2}
  - {name: cnic, kind: nic, node: 2}
  - {name: cnic2, kind: nic, node: 2}
  - {name: s1, kind: network_switch}
  - {name: s2, kind: network_switch}
  - {name: s3, kind: network_switch}
  - {name: x1, kind: network_switch}
  - {name: x2, kind: network_switch}
  - {name: x3, kind: network_switch}
links:
  - {between: [a0, asw], bandwidth: 450 GB/s, latency: 150 ns, kind: nvlink}
  - {between: [asw, anic], bandwidth: 64 GB/s, latency: 250 ns, kind: pcie}
  - {between: [anic, s1], bandwidth: 50 GB/s, latency: 300 ns, kind: infiniband}
  - {between: [anic, s3], bandwidth: 50 GB/s, latency: 300 ns, kind: infiniband}
  - {between: [b0, bsw], bandwidth: 450 GB/s, latency: 150 ns, kind: nvlink}
  - {between: [bsw, bnic], bandwidth: 64 GB/s, latency: 250 ns, kind: pcie}
  - {between: [bnic, s2], bandwidth: 50 GB/s, latency: 300 ns, kind: infiniband}
  - {between: [c0, csw], bandwidth: 450 GB/s, latency: 150 ns, kind: nvlink}
  - {between: [csw, cnic], bandwidth: 64 GB/s, latency: 100 ns, kind: pcie}
  - {between: [csw, cnic2], bandwidth: 64 GB/s, latency: 100 ns, kind: pcie}
  - {between: [cnic, s1], bandwidth: 50 GB/s, latency: 100 ns, kind: infiniband}
  - {between: [cnic2, s2], bandwidth: 50 GB/s, latency: 100 ns, kind: infiniband}
  - {between: [s3, x1], bandwidth: 50 GB/s, latency: 100 ns, kind: infiniband}
  - {between: [x1, x2], bandwidth: 50 GB/s, latency: 100 ns, kind: infiniband}
  - {between: [x2, x3], bandwidth: 50 GB/s, latency: 100 ns, kind: infiniband}
  - {between: [x3, s2], bandwidth: 50 GB/s, latency: 100 ns, kind: infiniband}
)";
    const topo::Cluster c = topo::load_topology(testing::write_temp_file("crossing_fabric.yaml", yaml), {});
    check_same_routes(c);
    // Both ways are taken: a route over s1 and one over s3, by flow key.
    topo::Router router(c);
    std::set<std::string> first_switch;
    for (std::uint64_t key = 0; key < 8; ++key)
        first_switch.insert(c.device(c.link(router.route(c.gpus()[0], c.gpus()[1], key)[2]).dst).name);
    CHECK(first_switch == std::set<std::string>{"s1", "s3"});
}

TEST_CASE("destinations alike in where they sit share the fabric's next hops towards them", "[topologies][routing]") {
    // Two leaf groups of two servers: a GPU's entry pattern is its group and its position in the server, so 32
    // GPUs give 16 patterns, and the routes are still the tables' (check_same_routes on the same preset above).
    const topo::Cluster c = topo::load_topology("dgx-h100", {"nodes=4", "nodes_per_leaf=2", "spines=2"});
    topo::Router router(c);
    for (const auto dst : c.gpus()) {
        for (const auto src : c.gpus()) (void)router.route(src, dst, 1);
    }
    CHECK(c.gpus().size() == 32);
    CHECK(router.entry_patterns() == 16);
}
