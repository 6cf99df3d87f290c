// The preset table, kept in alphabetical order.
#include "topologies/presets/preset_registry.h"

#include <algorithm>

#include <fmt/format.h>

#include "topologies/presets/fabric.h"
#include "topologies/presets/server_node.h"

namespace clustersim::topo {

namespace {
using engine::ParamSpec;
using engine::ParamType;

std::vector<ParamSpec> concat(std::vector<ParamSpec> a, const std::vector<ParamSpec>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::vector<ParamSpec> server_cluster_params(const std::string& kind) {
    return concat(concat({{"preset", ParamType::string, kind, "this preset's name"},
                          {"nodes", ParamType::integer, "1", "number of servers"}},
                         server_param_specs()),
                  fabric_param_specs());
}

std::vector<ParamSpec> direct_params(const std::string& extra_name, const std::string& extra_default,
                                     const std::string& extra_help, ParamType extra_type) {
    return {{extra_name, extra_type, extra_default, extra_help},
            {"gpu", ParamType::string, "H100", "GPU type from the catalogue"},
            {"bandwidth", ParamType::rate, "50 GB/s", "bandwidth of each link, per direction"},
            {"latency", ParamType::time, "1 us", "latency of each link"}};
}
}  // namespace

const std::vector<PresetEntry>& topology_presets() {
    static const std::vector<PresetEntry> entries = {
        {"cloud-h100", "H100 servers on an Ethernet (RoCE) fabric with 8x 200 Gb/s per node, as cloud H100 VMs",
         server_cluster_params("cloud-h100"), &build_server_cluster},
        {"dgx-a100", "DGX A100 servers: 8x A100-80GB on NVSwitch, 8x 200 Gb/s HDR NICs on PCIe Gen4",
         server_cluster_params("dgx-a100"), &build_server_cluster},
        {"dgx-h100", "DGX H100 servers: 8x H100 on NVSwitch, 8x 400 Gb/s NDR NICs on PCIe Gen5",
         server_cluster_params("dgx-h100"), &build_server_cluster},
        {"dgx-h200", "DGX H200 servers: as dgx-h100 with H200 GPUs (141 GB HBM3e)", server_cluster_params("dgx-h200"),
         &build_server_cluster},
        {"dgx1-v100", "DGX-1 servers: 8x V100 in an NVLink hybrid cube-mesh (no switch), 4x 100 Gb/s EDR NICs",
         server_cluster_params("dgx1-v100"), &build_server_cluster},
        {"edge",
         "small accelerators (Jetson AGX Orin) on one Ethernet or Wi-Fi-class switch, each its own node",
         {{"preset", ParamType::string, "edge", "this preset's name"},
          {"devices", ParamType::integer, "4", "number of devices"},
          {"gpu", ParamType::string, "AGX-Orin", "accelerator type from the catalogue"},
          {"bandwidth", ParamType::rate, "1 Gb/s",
           "each device's network link per direction (1 Gb/s: Gigabit Ethernet; a Wi-Fi link: e.g. 100 Mb/s)"},
          {"latency", ParamType::time, "50 us",
           "latency of each network link, device to switch (an assumption for a LAN hop with a socket transport; "
           "set it from a measured ping: half the round trip over two links)"}},
         &build_edge},
        {"heterogeneous", "servers of different kinds in one cluster, e.g. mix: \"dgx-a100:2,dgx-h100:2\"",
         concat(concat({{"preset", ParamType::string, "heterogeneous", "this preset's name"},
                        {"mix", ParamType::string, "", "server kinds and counts: \"dgx-a100:2,dgx-h100:2\"", true}},
                       server_param_specs()),
                fabric_param_specs()),
         &build_heterogeneous},
        {"multi-dc", "several datacenters, each a cluster of servers, joined by WAN links through gateways",
         concat(concat({{"preset", ParamType::string, "multi-dc", "this preset's name"},
                        {"datacenters", ParamType::integer, "2", "number of datacenters"},
                        {"node", ParamType::string, "dgx-h100", "server kind in every datacenter"},
                        {"nodes_per_dc", ParamType::integer, "2", "servers per datacenter"},
                        {"wan_bandwidth", ParamType::rate, "400 Gb/s", "bandwidth of each WAN link per direction"},
                        {"wan_latency", ParamType::time, "1 ms", "latency of each WAN link"}},
                       server_param_specs()),
                fabric_param_specs()),
         &build_multi_dc},
        {"pcie-box", "servers of 8 GPUs (L40S) behind 2 PCIe Gen4 switches, no NVLink, 2x 200 Gb/s NICs",
         server_cluster_params("pcie-box"), &build_server_cluster},
        {"roce-h100", "DGX H100-like servers on an Ethernet (RoCE, Spectrum-X-like) fabric, 8x 400 GbE NICs",
         server_cluster_params("roce-h100"), &build_server_cluster},
        {"ring", "GPUs in a bidirectional ring of direct links, no switches",
         concat({{"preset", ParamType::string, "ring", "this preset's name"}},
                direct_params("gpus", "8", "number of GPUs", ParamType::integer)),
         &build_ring},
        {"torus", "GPUs in a 2D or 3D torus of direct links (wrap-around in every dimension)",
         concat({{"preset", ParamType::string, "torus", "this preset's name"}},
                direct_params("dims", "4x4", "torus dimensions, \"4x4\" or \"4x4x4\"", ParamType::string)),
         &build_torus},
    };
    return entries;
}

const PresetEntry& find_topology_preset(std::string_view name, const engine::SourceLocation& where) {
    const auto& all = topology_presets();
    const auto it = std::find_if(all.begin(), all.end(), [&](const PresetEntry& e) { return e.name == name; });
    if (it != all.end()) return *it;
    std::string known;
    for (const auto& e : all) known += (known.empty() ? "" : ", ") + e.name;
    throw engine::InputError(where, fmt::format("unknown topology preset '{}' (known: {})", name, known));
}

}  // namespace clustersim::topo
