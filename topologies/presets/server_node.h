// Builders of one server (node): GPUs, their GPU-to-GPU fabric (NVSwitch, NVLink cube-mesh or none), PCIe
// switches, host CPUs and NICs. The named presets (dgx-a100, dgx-h100, ...) are ServerShapes with their values.
#pragma once

#include <string>
#include <vector>

#include "engine/params.h"
#include "topologies/cluster.h"

namespace clustersim::topo {

enum class GpuFabric { nvswitch, dgx1_cube_mesh, none };

/// Everything that distinguishes one kind of server. Bandwidths are per direction.
struct ServerShape {
    std::string preset;  // "dgx-h100", for descriptions
    std::string gpu;     // catalogue name
    int gpus = 8;
    GpuFabric gpu_fabric = GpuFabric::nvswitch;
    double nvlink_bandwidth = 0;  // per GPU to the NVSwitch; per NVLink link (x count) in a cube-mesh
    engine::Time nvlink_latency{};
    int pcie_switches = 4;  // GPUs and NICs are spread evenly over them
    double pcie_bandwidth = 0;
    engine::Time pcie_latency{};
    int cpus = 2;  // PCIe switches are spread evenly over the CPUs; CPUs joined by a socket link
    double socket_bandwidth = 0;
    engine::Time socket_latency{};
    int nics = 8;
    double nic_bandwidth = 0;
    engine::Time nic_latency{};               // NIC processing, added on the PCIe switch <-> NIC cable
    LinkKind network = LinkKind::infiniband;  // the fabric the NICs join
    engine::Time network_latency{150000};     // ps; per network link (cable plus switch), unless overridden
};

struct BuiltNode {
    std::vector<DeviceId> gpus;
    std::vector<DeviceId> nics;
    double nic_bandwidth = 0;
};

/// Adds one server; device names start with `prefix` ("n3." or "dc1.n3.").
BuiltNode build_server(Cluster& cluster, const ServerShape& shape, int node, int datacenter, const std::string& prefix);

/// Server kinds usable as nodes of a cluster, in alphabetical order: "dgx-a100", "dgx-h100", ...
const std::vector<std::string>& server_kinds();
/// The shape of server kind `kind` with the overrides in `params` (gpu, nic_bandwidth, latencies) applied.
/// Throws a located InputError (at `params`' "node" or "preset") for an unknown kind.
ServerShape server_shape(const std::string& kind, const engine::Params& params, const std::string& param_name);

/// Parameter specs that override a server's defaults ("" keeps the server kind's value).
std::vector<engine::ParamSpec> server_param_specs();

}  // namespace clustersim::topo
