// Directed links of the hardware graph. A cable is two links, one per direction, each with its own bandwidth.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/ids.h"
#include "engine/time.h"
#include "topologies/device.h"

namespace clustersim::topo {

struct LinkTag {};
using LinkId = engine::StrongId<LinkTag>;

/// Kinds, spelled as in topology YAML.
enum class LinkKind : std::uint8_t { nvlink, pcie, infiniband, ethernet, wan, socket };

const char* link_kind_name(LinkKind kind);
std::optional<LinkKind> parse_link_kind(std::string_view name);
std::string link_kind_names();

struct Link {
    DeviceId src;
    DeviceId dst;
    double bandwidth_bytes_per_s = 0;  // in this direction
    engine::Time latency{};            // propagation + switching, per traversal
    LinkKind kind = LinkKind::nvlink;

    bool operator==(const Link&) const = default;
};

}  // namespace clustersim::topo
