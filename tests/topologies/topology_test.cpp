// Presets, explicit topology files and their error messages, and routing (NVLink inside a node, GPUDirect RDMA
// across nodes, ECMP spreading).
#include <map>

#include <catch2/catch.hpp>

#include "engine/yaml_reader.h"
#include "sim/replay/replay.h"
#include "tests/sim/replay_fixture.h"
#include "tests/test_support.h"
#include "topologies/router.h"
#include "topologies/topology_loader.h"
#include "topologies/topology_summary.h"

using namespace clustersim;
using Catch::Matchers::Contains;
using testing::test_data;

namespace {
std::vector<std::string> route_names(const topo::Cluster& c, const std::vector<topo::LinkId>& route) {
    std::vector<std::string> names;
    if (!route.empty()) names.push_back(c.device(c.link(route.front()).src).name);
    for (const auto l : route) names.push_back(c.device(c.link(l).dst).name);
    return names;
}
}  // namespace

TEST_CASE("a dgx-h100 node has 8 GPUs on one NVSwitch and 8 NICs, each beside its GPU on a PCIe switch",
          "[topologies][presets]") {
    const auto c = topo::load_topology("dgx-h100", {"nodes=2"});
    const auto s = topo::summarize(c);
    REQUIRE(s.devices_by_kind.at("gpu") == 16);
    REQUIRE(s.devices_by_kind.at("nic") == 16);
    REQUIRE(s.devices_by_kind.at("nvswitch") == 2);
    REQUIRE(s.devices_by_kind.at("pcie_switch") == 16);
    REQUIRE(s.devices_by_kind.at("network_switch") == 8 + 8);  // 8 rail leaves + 8 spines
    REQUIRE(s.links_by_kind.at("nvlink") == 2 * 8 * 2);
    REQUIRE(c.gpu_spec(c.gpus()[0]).name == "H100");
    // Bisection of 2 nodes: one node's 8 NICs at 400 Gb/s = 400 GB/s.
    REQUIRE(s.bisection_bandwidth == Approx(400e9));
}

TEST_CASE("GPUs in one node talk over NVSwitch; across nodes over PCIe, NIC and the rail", "[topologies][routing]") {
    const auto c = topo::load_topology("dgx-h100", {"nodes=2"});
    topo::Router r(c);
    const auto g = [&](const char* name) { return *c.find_device(name); };
    REQUIRE(route_names(c, r.route(g("n0.gpu0"), g("n0.gpu5"))) ==
            std::vector<std::string>{"n0.gpu0", "n0.nvswitch", "n0.gpu5"});
    REQUIRE(
        route_names(c, r.route(g("n0.gpu0"), g("n1.gpu0"))) ==
        std::vector<std::string>{"n0.gpu0", "n0.pcie0", "n0.nic0", "leaf0.rail0", "n1.nic0", "n1.pcie0", "n1.gpu0"});
    // 150 + 150 ns over NVSwitch.
    REQUIRE(r.path_latency(g("n0.gpu0"), g("n0.gpu5")) == engine::Time{300'000});
}

TEST_CASE("the dgx1-v100 cube-mesh gives each V100 six NVLinks and no switch", "[topologies][presets]") {
    const auto c = topo::load_topology("dgx1-v100", {});
    double per_gpu = 0;
    int links = 0;
    for (const auto& l : c.links()) {
        if (l.kind == topo::LinkKind::nvlink && l.src == c.gpus()[0]) {
            per_gpu += l.bandwidth_bytes_per_s;
            ++links;
        }
    }
    REQUIRE(links == 4);        // peers 1, 2, 3 and 4
    REQUIRE(per_gpu == 150e9);  // 6 links x 25 GB/s
    REQUIRE(topo::summarize(c).devices_by_kind.count("nvswitch") == 0);
    topo::Router r(c);
    REQUIRE(r.route(*c.find_device("n0.gpu0"), *c.find_device("n0.gpu4")).size() == 1);
}

TEST_CASE("ECMP spreads 64 flows between two leaves evenly over 8 spines", "[topologies][routing]") {
    const auto c = topo::load_topology("dgx-h100", {"nodes=2", "fabric=leaf-spine", "nodes_per_leaf=1", "spines=8"});
    topo::Router r(c);
    std::map<std::string, int> per_spine;
    for (std::uint64_t k = 0; k < 64; ++k) {
        const auto src = c.gpus()[k % 8];
        const auto dst = c.gpus()[8 + (k * 3) % 8];
        for (const auto l : r.route(src, dst, k)) {
            const auto& d = c.device(c.link(l).dst);
            if (d.name.rfind("spine", 0) == 0) ++per_spine[d.name];
        }
    }
    REQUIRE(per_spine.size() == 8);
    for (const auto& [spine, n] : per_spine) {
        INFO(spine);
        REQUIRE(n >= 7);
        REQUIRE(n <= 9);
    }
}

TEST_CASE("ring and torus presets wire each GPU to its neighbours", "[topologies][presets]") {
    const auto ring = topo::load_topology("ring", {"gpus=6"});
    REQUIRE(ring.links().size() == 12);
    const auto torus = topo::load_topology("torus", {"dims=4x4x2"});
    // 3D torus 4x4x2: 32 GPUs; 32 cables in x, 32 in y, 16 in z (a dimension of 2 has one neighbour).
    REQUIRE(torus.gpus().size() == 32);
    REQUIRE(torus.links().size() == 2 * (32 + 32 + 16));
    REQUIRE(topo::summarize(torus).diameter_hops == 2 + 2 + 1);
}

TEST_CASE("multi-dc joins datacenters through WAN links with their latency", "[topologies][presets]") {
    const auto c = topo::load_topology("multi-dc", {"datacenters=2", "nodes_per_dc=1", "wan_latency=2 ms"});
    topo::Router r(c);
    const auto a = *c.find_device("dc0.n0.gpu0"), b = *c.find_device("dc1.n0.gpu0");
    int wan = 0;
    for (const auto l : r.route(a, b)) wan += c.link(l).kind == topo::LinkKind::wan;
    REQUIRE(wan == 1);
    REQUIRE(r.path_latency(a, b) > engine::Time{2'000'000'000});
}

TEST_CASE("a heterogeneous cluster holds servers of different GPU types", "[topologies][presets]") {
    const auto c = topo::load_topology("heterogeneous", {"mix=dgx-a100:1,dgx-h100:2"});
    const auto s = topo::summarize(c);
    REQUIRE(s.gpus_by_type.at("A100-80GB") == 8);
    REQUIRE(s.gpus_by_type.at("H100") == 16);
    REQUIRE(s.nodes == 3);
}

TEST_CASE("an explicit topology file loads devices and cables", "[topologies][input]") {
    const auto c = topo::load_topology(test_data("topologies/two_gpus.yaml"), {});
    REQUIRE(c.gpus().size() == 2);
    REQUIRE(c.links().size() == 4);
    REQUIRE(c.description == "two-gpus");
}

TEST_CASE("bad topology files are rejected with file, line, column and what was expected", "[topologies][input]") {
    const auto load = [](const char* name) {
        return topo::load_topology(test_data(std::string("topologies/") + name), {});
    };
    REQUIRE_THROWS_WITH(load("bad_unknown_device.yaml"),
                        Contains("bad_unknown_device.yaml:5:19: links[0].between[1]: link to unknown device 'c'"));
    REQUIRE_THROWS_WITH(
        load("bad_bandwidth_unit.yaml"),
        Contains("bad_bandwidth_unit.yaml:6:16: links[0].bandwidth: expected a rate like") && Contains("got \"450\""));
    REQUIRE_THROWS_WITH(load("bad_duplicate_name.yaml"),
                        Contains("bad_duplicate_name.yaml:3:12: devices[1].name: duplicate device name 'a'"));
    REQUIRE_THROWS_WITH(load("bad_device_kind.yaml"),
                        Contains("bad_device_kind.yaml:2:21: devices[0].kind: unknown device kind 'tpu' (known: gpu"));
    REQUIRE_THROWS_WITH(load("bad_unknown_gpu.yaml"),
                        Contains("devices[0].gpu: unknown GPU 'B300' (known: V100, A100-40GB"));
    REQUIRE_THROWS_WITH(load("bad_dangling_link.yaml"),
                        Contains("bad_dangling_link.yaml:5:5: links[0]: missing required key 'to'"));
    REQUIRE_THROWS_WITH(load("bad_unknown_key.yaml"), Contains("links[0].bandwith: unknown key 'bandwith'"));
}

TEST_CASE("bad preset parameters are rejected and point to --set", "[topologies][input]") {
    REQUIRE_THROWS_WITH(topo::load_topology("dgx-h200x", {}),
                        Contains("unknown topology preset 'dgx-h200x' (known: cloud-h100, dgx-a100"));
    REQUIRE_THROWS_WITH(topo::load_topology("dgx-h100", {"nodes=two"}), Contains("--set: nodes: expected an integer"));
    REQUIRE_THROWS_WITH(topo::load_topology("dgx-h100", {"nodez=2"}), Contains("unknown key 'nodez'"));
    REQUIRE_THROWS_WITH(topo::load_topology("dgx-h100", {"fabric=mesh"}), Contains("unknown fabric 'mesh'"));
    REQUIRE_THROWS_WITH(topo::load_topology("dgx-h100", {"nodes=2", "fabric=none"}),
                        Contains("fabric 'none' cannot join more than one node"));
    REQUIRE_THROWS_WITH(topo::load_topology("dgx-h100", {"network_latency=5"}), Contains("missing unit"));
    // A path that names no file is a missing file, not an unknown preset.
    REQUIRE_THROWS_WITH(topo::load_topology("./missing.yaml", {}),
                        "./missing.yaml: no such topology file (or give a preset name: clustersim topo list)");
    REQUIRE_THROWS_WITH(topo::load_topology("/tmp", {}), Contains("/tmp: not a regular file"));
    // Sizes past what any parameter allows in all: 64 datacenters of 65,536 servers.
    REQUIRE_THROWS_WITH(topo::load_topology("multi-dc", {"datacenters=64", "nodes_per_dc=65536"}),
                        Contains("64 datacenters x 65536 servers: expected at most 65536 servers in all"));
}

TEST_CASE("a topology that cannot carry traffic between every GPU pair is refused at load", "[topologies][input]") {
    using Catch::Matchers::Contains;
    REQUIRE_THROWS_WITH(topo::load_topology("dgx-h100", {"nodes=64", "spines=0"}),
                        Contains("the topology cannot carry traffic between all GPUs: no route from 'n0.gpu0' to GPU "
                                 "'n32.gpu0'"));
    // The explicit format's example in docs/formats.md, once with its way back and once without it.
    const std::string both =
        "devices:\n  - {name: a, kind: gpu, gpu: H100}\n  - {name: b, kind: gpu, gpu: H100}\n"
        "  - {name: sw, kind: nvswitch, node: 0}\nlinks:\n"
        "  - {between: [a, sw], bandwidth: 450 GB/s, latency: 150 ns, kind: nvlink}\n"
        "  - {from: sw, to: b, bandwidth: 450 GB/s, latency: 150 ns, kind: nvlink}\n";
    const auto load = [](const std::string& text) {
        return topo::load_topology(engine::YamlValue::load_string(text, "two.yaml"));
    };
    REQUIRE_THROWS_WITH(load(both), Contains("two.yaml:1:1: the topology cannot carry traffic between all GPUs: no "
                                             "route from GPU 'b' to 'a'"));
    REQUIRE_NOTHROW(load(both + "  - {from: b, to: sw, bandwidth: 450 GB/s, latency: 150 ns, kind: nvlink}\n"));
}

TEST_CASE("links a run cannot represent are input errors at load, not internal errors later", "[topologies][input]") {
    using Catch::Matchers::Contains;
    REQUIRE_THROWS_WITH(topo::load_topology("ring", {"bandwidth=1e-20 B/s"}),
                        Contains("link gpu0 -> gpu1: bandwidth 1e-20 B/s (expected a bandwidth from 1 kB/s to 1 PB/s"));
    REQUIRE_THROWS_WITH(topo::load_topology("ring", {"latency=2000 h"}), Contains("link gpu0 -> gpu1: latency"));
    REQUIRE_NOTHROW(topo::load_topology("ring", {"bandwidth=1 PB/s", "latency=0 ns"}));
}

TEST_CASE("Ethernet presets build RoCE fabrics with their own NICs and latencies", "[topologies]") {
    // roce-h100: DGX H100-like servers, 8 x 400 GbE on Ethernet links of 500 ns (SimAI's RoCE topologies);
    // cloud-h100: the same with 8 x 200 Gb/s. network_latency still overrides.
    const std::vector<std::pair<std::string, double>> presets = {{"roce-h100", 50e9}, {"cloud-h100", 25e9}};
    for (const auto& [preset, nic] : presets) {
        INFO(preset);
        const auto c = topo::load_topology(preset, {"nodes=2"});
        std::size_t ethernet = 0, infiniband = 0;
        for (const auto& link : c.links()) {
            ethernet += link.kind == topo::LinkKind::ethernet;
            infiniband += link.kind == topo::LinkKind::infiniband;
            if (link.kind == topo::LinkKind::ethernet && c.device(link.src).kind == topo::DeviceKind::nic) {
                REQUIRE(link.bandwidth_bytes_per_s == nic);
                REQUIRE(link.latency == engine::Time{500'000});
            }
        }
        REQUIRE(ethernet > 0);
        REQUIRE(infiniband == 0);
        const auto fast = topo::load_topology(preset, {"nodes=2", "network_latency=100 ns"});
        for (const auto& link : fast.links()) {
            if (link.kind == topo::LinkKind::ethernet) REQUIRE(link.latency == engine::Time{100'000});
        }
    }
    // InfiniBand presets keep 150 ns.
    const auto ib = topo::load_topology("dgx-h100", {"nodes=2"});
    for (const auto& link : ib.links()) {
        if (link.kind == topo::LinkKind::infiniband) REQUIRE(link.latency == engine::Time{150'000});
    }
}

TEST_CASE("explicit GPUs with forwards: true carry their neighbours' traffic, as the ring preset's do",
          "[topologies][routing]") {
    // Four H100s cabled in a ring: g0 reaches g2 through a neighbour; a ring all-reduce takes what it takes on
    // the ring preset with the same cables. Without 'forwards' the file is refused at load.
    const auto cabled = topo::load_topology(test_data("topologies/cabled_ring4.yaml"), {});
    const auto preset = topo::load_topology("ring", {"gpus=4", "bandwidth=50 GB/s", "latency=500 ns"});
    testing::GraphBuilder b(4);
    for (std::uint32_t r = 0; r < 4; ++r) b.collective(r, "c", "world", {0, 1, 2, 3}, 16u << 20);
    auto options = testing::exact_options();
    options.algorithm = sim::find_collective_algorithm("ring");
    REQUIRE(sim::replay(b.g, cabled, options).timeline.makespan == sim::replay(b.g, preset, options).timeline.makespan);
}

TEST_CASE("the edge preset puts each module on one switch port at the given rate", "[topologies][presets]") {
    const auto c = topo::load_topology("edge", {"devices=3", "bandwidth=100 Mb/s", "latency=2 ms"});
    REQUIRE(c.gpus().size() == 3);
    REQUIRE(c.gpu_spec(c.gpus()[0]).name == "AGX-Orin");
    topo::Router router(c);
    const auto route = router.route(c.gpus()[0], c.gpus()[2]);
    REQUIRE(route_names(c, route) ==
            std::vector<std::string>{"dev0.gpu", "dev0.cpu", "dev0.nic", "switch", "dev2.nic", "dev2.cpu", "dev2.gpu"});
    REQUIRE(router.path_latency(c.gpus()[0], c.gpus()[2]) == engine::Time{4'000'000'000 + 4 * 250'000});
    REQUIRE(c.link(route[2]).bandwidth_bytes_per_s == 12.5e6);
    REQUIRE_THROWS_WITH(topo::load_topology("edge", {"devices=0"}), Catch::Matchers::Contains("from 1 to 65536"));
}
