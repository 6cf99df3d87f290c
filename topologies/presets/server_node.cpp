// Server shapes and their construction. Values and their sources: docs/topologies.md.
// Modelling choice: the NVSwitch chips of a DGX/HGX board (6 on A100, 4 on H100) are one logical switch with
// each GPU's full NVLink bandwidth, because NVLink traffic is striped over all chips; modelling the chips
// separately would cap a single GPU-to-GPU flow at a quarter or a sixth of its real rate.
// Likewise each DGX A100/H100 GPU is modelled behind a PCIe switch port shared only with its own NIC (GPU k with
// NIC k, as NCCL pairs them for GPUDirect RDMA), so that no two GPUs contend for one NIC by a routing accident.
// The real boards put two GPU/NIC pairs on each of four switches; the pairs' traffic does not cross there.
#include "topologies/presets/server_node.h"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "engine/units.h"

namespace clustersim::topo {

namespace {

using engine::Time;
using namespace std::chrono_literals;

ServerShape dgx_a100() {
    return ServerShape{.preset = "dgx-a100",
                       .gpu = "A100-80GB",
                       .gpus = 8,
                       .gpu_fabric = GpuFabric::nvswitch,
                       .nvlink_bandwidth = 300e9,
                       .nvlink_latency = 150ns,
                       .pcie_switches = 8,      // each GPU with its own NIC: see the note at the top
                       .pcie_bandwidth = 32e9,  // Gen4 x16 per direction
                       .pcie_latency = 250ns,
                       .cpus = 2,
                       .socket_bandwidth = 100e9,
                       .socket_latency = 150ns,
                       .nics = 8,
                       .nic_bandwidth = 25e9,  // HDR 200 Gb/s
                       .nic_latency = 500ns};
}

ServerShape dgx_h100() {
    ServerShape s = dgx_a100();
    s.preset = "dgx-h100";
    s.gpu = "H100";
    s.nvlink_bandwidth = 450e9;
    s.pcie_bandwidth = 64e9;  // Gen5 x16 per direction
    s.nic_bandwidth = 50e9;   // NDR 400 Gb/s
    return s;
}

ServerShape dgx_h200() {
    ServerShape s = dgx_h100();
    s.preset = "dgx-h200";
    s.gpu = "H200";
    return s;
}

ServerShape dgx1_v100() {
    return ServerShape{.preset = "dgx1-v100",
                       .gpu = "V100",
                       .gpus = 8,
                       .gpu_fabric = GpuFabric::dgx1_cube_mesh,
                       .nvlink_bandwidth = 25e9,  // per NVLink2 link per direction
                       .nvlink_latency = 150ns,
                       .pcie_switches = 4,
                       .pcie_bandwidth = 16e9,  // Gen3 x16 per direction
                       .pcie_latency = 250ns,
                       .cpus = 2,
                       .socket_bandwidth = 19.2e9,  // 2 QPI links x 9.6 GT/s
                       .socket_latency = 200ns,
                       .nics = 4,
                       .nic_bandwidth = 12.5e9,  // EDR 100 Gb/s
                       .nic_latency = 500ns};
}

ServerShape pcie_box() {
    return ServerShape{.preset = "pcie-box",
                       .gpu = "L40S",
                       .gpus = 8,
                       .gpu_fabric = GpuFabric::none,
                       .nvlink_bandwidth = 0,
                       .nvlink_latency = 0ns,
                       .pcie_switches = 2,
                       .pcie_bandwidth = 32e9,  // Gen4 x16 per direction
                       .pcie_latency = 250ns,
                       .cpus = 2,
                       .socket_bandwidth = 64e9,
                       .socket_latency = 200ns,
                       .nics = 2,
                       .nic_bandwidth = 25e9,  // 200 Gb/s
                       .nic_latency = 500ns};
}

// Ethernet (RoCE) clusters: DGX-H100-like servers whose NICs join an Ethernet fabric. Per network link 500 ns,
// the NIC-to-switch and switch-to-switch latency of SimAI's RoCE topologies (Spectrum-X and Alibaba HPN,
// aliyun/SimAI astra-sim-alibabacloud/inputs/topo/gen_Topo_Template.py, default 0.0005 ms), against 150 ns taken
// for InfiniBand.
ServerShape roce_h100() {
    ServerShape s = dgx_h100();
    s.preset = "roce-h100";
    s.network = LinkKind::ethernet;
    s.network_latency = 500ns;  // NICs stay 400 Gb/s, as in SimAI's Spectrum-X topologies
    return s;
}

ServerShape cloud_h100() {
    ServerShape s = roce_h100();
    s.preset = "cloud-h100";
    s.nic_bandwidth = 25e9;  // 8 x 200 Gb/s Ethernet per node (SimAI's Alibaba HPN NIC bandwidth, cloud H100 VMs)
    return s;
}

using ShapeMaker = ServerShape (*)();
constexpr std::array<std::pair<const char*, ShapeMaker>, 7> shapes = {{
    {"cloud-h100", &cloud_h100},
    {"dgx-a100", &dgx_a100},
    {"dgx-h100", &dgx_h100},
    {"dgx-h200", &dgx_h200},
    {"dgx1-v100", &dgx1_v100},
    {"pcie-box", &pcie_box},
    {"roce-h100", &roce_h100},
}};

// DGX-1 (Volta) hybrid cube-mesh: (gpu a, gpu b, NVLink links between them); each GPU uses its 6 links.
// From `nvidia-smi topo -m` on a DGX-1V (NV1 / NV2 entries) and the DGX-1 system architecture white paper.
constexpr std::array<std::array<int, 3>, 16> dgx1_mesh = {{
    {0, 1, 1},
    {0, 2, 1},
    {0, 3, 2},
    {0, 4, 2},
    {1, 2, 2},
    {1, 3, 1},
    {1, 5, 2},
    {2, 3, 2},
    {2, 6, 1},
    {3, 7, 1},
    {4, 5, 1},
    {4, 6, 1},
    {4, 7, 2},
    {5, 6, 2},
    {5, 7, 1},
    {6, 7, 2},
}};

}  // namespace

const std::vector<std::string>& server_kinds() {
    static const std::vector<std::string> kinds = [] {
        std::vector<std::string> k;
        for (const auto& [name, make] : shapes) k.emplace_back(name);
        return k;
    }();
    return kinds;
}

std::vector<engine::ParamSpec> server_param_specs() {
    using engine::ParamType;
    return {
        {"gpu", ParamType::string, "", "GPU type from the catalogue (default: the server's own)"},
        {"nic_bandwidth", ParamType::string, "",
         "bandwidth of each NIC port, e.g. \"400 Gb/s\" (default: the server's)"},
        {"nic_latency", ParamType::string, "", "NIC processing latency per traversal (default 500 ns)"},
        {"nvlink_latency", ParamType::string, "", "latency of each NVLink hop (default 150 ns)"},
        {"pcie_latency", ParamType::string, "", "latency of each PCIe hop (default 250 ns)"},
        {"nvlink_bandwidth", ParamType::string, "",
         "NVLink bandwidth of each GPU per direction, all links together, e.g. \"200 GB/s\" for an H800-like "
         "node (default: the GPU's; in a cube-mesh, per link)"},
        {"pcie_bandwidth", ParamType::string, "",
         "bandwidth of each x16 PCIe link per direction, e.g. \"128 GB/s\" (default: the server's generation)"},
        {"pcie_gen", ParamType::integer, "0",
         "PCIe generation of the x16 links: 3, 4, 5 or 6 (16, 32, 64, 128 GB/s per direction; 0: the server's)"},
    };
}

ServerShape server_shape(const std::string& kind, const engine::Params& params, const std::string& param_name) {
    ServerShape shape;
    bool found = false;
    for (const auto& [name, make] : shapes) {
        if (kind == name) {
            shape = make();
            found = true;
        }
    }
    if (!found) {
        std::string known;
        for (const auto& k : server_kinds()) known += (known.empty() ? "" : ", ") + k;
        params.fail(param_name, fmt::format("unknown server kind '{}' (known: {})", kind, known));
    }
    auto override_time = [&](const char* name, Time& field) {
        if (!params.string(name).empty()) field = engine::parse_time(params.string(name), params.location(name));
    };
    if (!params.string("gpu").empty()) shape.gpu = params.string("gpu");
    if (!params.string("nic_bandwidth").empty())
        shape.nic_bandwidth = engine::parse_rate(params.string("nic_bandwidth"), params.location("nic_bandwidth"));
    override_time("nic_latency", shape.nic_latency);
    override_time("nvlink_latency", shape.nvlink_latency);
    override_time("pcie_latency", shape.pcie_latency);
    if (!params.string("nvlink_bandwidth").empty()) {
        shape.nvlink_bandwidth =
            engine::parse_rate(params.string("nvlink_bandwidth"), params.location("nvlink_bandwidth"));
        if (!(shape.nvlink_bandwidth > 0)) params.fail("nvlink_bandwidth", "expected a positive rate");
    }
    // PCIe x16 per direction by generation: 8, 16, 32, 64 GT/s x 16 lanes with 128b/130b coding (Gen6: FLIT mode),
    // rounded as vendors quote them (PCI-SIG specifications; ../shared/data/reference/hardware_specs.csv).
    const auto gen = params.integer("pcie_gen");
    if (gen != 0) {
        if (!params.string("pcie_bandwidth").empty())
            params.fail("pcie_gen", "give pcie_gen or pcie_bandwidth, not both");
        if (gen < 3 || gen > 6) params.fail("pcie_gen", fmt::format("expected 3, 4, 5 or 6, got {}", gen));
        shape.pcie_bandwidth = 16e9 * static_cast<double>(1 << (gen - 3));
    }
    if (!params.string("pcie_bandwidth").empty())
        shape.pcie_bandwidth = engine::parse_rate(params.string("pcie_bandwidth"), params.location("pcie_bandwidth"));
    if (!(shape.pcie_bandwidth > 0)) params.fail("pcie_bandwidth", "expected a positive rate");
    return shape;
}

BuiltNode build_server(Cluster& cluster, const ServerShape& shape, int node, int datacenter,
                       const std::string& prefix) {
    const auto& catalogue = GpuCatalogue::builtin();
    const auto spec_index = catalogue.find(shape.gpu);
    if (!spec_index)
        throw engine::InputError(fmt::format("unknown GPU '{}' (known: {})", shape.gpu, catalogue.names()));
    const std::int32_t spec = cluster.add_gpu_spec(catalogue.gpus()[*spec_index]);
    auto add = [&](DeviceKind kind, const std::string& name) {
        return cluster.add_device(Device{prefix + name, kind, node, kind == DeviceKind::gpu ? spec : -1, datacenter});
    };
    BuiltNode built;
    built.nic_bandwidth = shape.nic_bandwidth;
    for (int g = 0; g < shape.gpus; ++g) built.gpus.push_back(add(DeviceKind::gpu, fmt::format("gpu{}", g)));

    if (shape.gpu_fabric == GpuFabric::nvswitch) {
        const DeviceId sw = add(DeviceKind::nvswitch, "nvswitch");
        for (const DeviceId g : built.gpus)
            cluster.add_cable(g, sw, shape.nvlink_bandwidth, shape.nvlink_latency, LinkKind::nvlink);
    } else if (shape.gpu_fabric == GpuFabric::dgx1_cube_mesh) {
        for (const auto& [a, b, links] : dgx1_mesh) {
            cluster.add_cable(built.gpus[static_cast<std::size_t>(a)], built.gpus[static_cast<std::size_t>(b)],
                              shape.nvlink_bandwidth * links, shape.nvlink_latency, LinkKind::nvlink);
        }
    }

    std::vector<DeviceId> cpus;
    for (int c = 0; c < shape.cpus; ++c) cpus.push_back(add(DeviceKind::cpu, fmt::format("cpu{}", c)));
    for (std::size_t c = 1; c < cpus.size(); ++c)
        cluster.add_cable(cpus[c - 1], cpus[c], shape.socket_bandwidth, shape.socket_latency, LinkKind::socket);
    std::vector<DeviceId> switches;
    for (int p = 0; p < shape.pcie_switches; ++p) {
        switches.push_back(add(DeviceKind::pcie_switch, fmt::format("pcie{}", p)));
        const auto cpu = cpus[static_cast<std::size_t>(p * shape.cpus / shape.pcie_switches)];
        cluster.add_cable(switches.back(), cpu, shape.pcie_bandwidth, shape.pcie_latency, LinkKind::pcie);
    }
    for (int g = 0; g < shape.gpus; ++g) {
        const auto sw = switches[static_cast<std::size_t>(g * shape.pcie_switches / shape.gpus)];
        cluster.add_cable(built.gpus[static_cast<std::size_t>(g)], sw, shape.pcie_bandwidth, shape.pcie_latency,
                          LinkKind::pcie);
    }
    for (int n = 0; n < shape.nics; ++n) {
        built.nics.push_back(add(DeviceKind::nic, fmt::format("nic{}", n)));
        const auto sw = switches[static_cast<std::size_t>(n * shape.pcie_switches / shape.nics)];
        cluster.add_cable(built.nics.back(), sw, shape.pcie_bandwidth, shape.pcie_latency + shape.nic_latency,
                          LinkKind::pcie);
    }
    return built;
}

}  // namespace clustersim::topo
