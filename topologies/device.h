// Devices of the hardware graph: GPUs, host CPUs, switches and NICs, named and indexed by DeviceId.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/ids.h"

namespace clustersim::topo {

struct DeviceTag {};
using DeviceId = engine::StrongId<DeviceTag>;

/// Kinds, spelled as in topology YAML.
enum class DeviceKind : std::uint8_t { gpu, cpu, nvswitch, pcie_switch, nic, network_switch };

const char* device_kind_name(DeviceKind kind);
std::optional<DeviceKind> parse_device_kind(std::string_view name);
/// "gpu, cpu, ..." for messages.
std::string device_kind_names();

struct Device {
    std::string name;
    DeviceKind kind = DeviceKind::gpu;
    std::int32_t node = -1;       // server index, -1 for fabric switches outside any server
    std::int32_t gpu_spec = -1;   // index into the GPU catalogue, for GPUs
    std::int32_t datacenter = 0;  // for multi-datacenter clusters
    bool relays = false;          // a GPU that forwards others' traffic (switchless ring and torus fabrics)

    bool operator==(const Device&) const = default;
};

/// Whether traffic may pass through a device on its way elsewhere. GPUs do not, unless they are the fabric
/// themselves (ring, torus): peer traffic through a third GPU is otherwise an algorithm's explicit choice, as
/// NCCL's PXN. Everything else does (a host CPU is the PCIe root complex between its switches and its socket).
constexpr bool forwards_traffic(const Device& device) { return device.kind != DeviceKind::gpu || device.relays; }

}  // namespace clustersim::topo
