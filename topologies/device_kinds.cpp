// Name tables for device and link kinds: one table each maps names both ways.
#include <array>
#include <utility>

#include "topologies/device.h"
#include "topologies/link.h"

namespace clustersim::topo {

namespace {
constexpr std::array<std::pair<DeviceKind, const char*>, 6> device_names = {{
    {DeviceKind::gpu, "gpu"},
    {DeviceKind::cpu, "cpu"},
    {DeviceKind::nvswitch, "nvswitch"},
    {DeviceKind::pcie_switch, "pcie_switch"},
    {DeviceKind::nic, "nic"},
    {DeviceKind::network_switch, "network_switch"},
}};
constexpr std::array<std::pair<LinkKind, const char*>, 6> link_names = {{
    {LinkKind::nvlink, "nvlink"},
    {LinkKind::pcie, "pcie"},
    {LinkKind::infiniband, "infiniband"},
    {LinkKind::ethernet, "ethernet"},
    {LinkKind::wan, "wan"},
    {LinkKind::socket, "socket"},
}};

template <class Table>
std::string joined(const Table& table) {
    std::string out;
    for (const auto& [kind, name] : table) out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
}
}  // namespace

const char* device_kind_name(DeviceKind kind) { return device_names[static_cast<std::size_t>(kind)].second; }
const char* link_kind_name(LinkKind kind) { return link_names[static_cast<std::size_t>(kind)].second; }

std::optional<DeviceKind> parse_device_kind(std::string_view name) {
    for (const auto& [kind, text] : device_names) {
        if (name == text) return kind;
    }
    return std::nullopt;
}

std::optional<LinkKind> parse_link_kind(std::string_view name) {
    for (const auto& [kind, text] : link_names) {
        if (name == text) return kind;
    }
    return std::nullopt;
}

std::string device_kind_names() { return joined(device_names); }
std::string link_kind_names() { return joined(link_names); }

}  // namespace clustersim::topo
