// Name tables for device and link kinds: one table each maps names both ways.
#include "engine/enum_names.h"

#include "topologies/device.h"
#include "topologies/link.h"

namespace clustersim::topo {

namespace {
constexpr engine::NameTable<DeviceKind, 6> device_names = {{
    {DeviceKind::gpu, "gpu"},
    {DeviceKind::cpu, "cpu"},
    {DeviceKind::nvswitch, "nvswitch"},
    {DeviceKind::pcie_switch, "pcie_switch"},
    {DeviceKind::nic, "nic"},
    {DeviceKind::network_switch, "network_switch"},
}};
constexpr engine::NameTable<LinkKind, 6> link_names = {{
    {LinkKind::nvlink, "nvlink"},
    {LinkKind::pcie, "pcie"},
    {LinkKind::infiniband, "infiniband"},
    {LinkKind::ethernet, "ethernet"},
    {LinkKind::wan, "wan"},
    {LinkKind::socket, "socket"},
}};

}  // namespace

const char* device_kind_name(DeviceKind kind) { return engine::enum_name(device_names, kind); }
const char* link_kind_name(LinkKind kind) { return engine::enum_name(link_names, kind); }
std::optional<DeviceKind> parse_device_kind(std::string_view name) {
    return engine::enum_from_name(device_names, name);
}
std::optional<LinkKind> parse_link_kind(std::string_view name) { return engine::enum_from_name(link_names, name); }
std::string device_kind_names() { return engine::enum_names(device_names); }
std::string link_kind_names() { return engine::enum_names(link_names); }

}  // namespace clustersim::topo
