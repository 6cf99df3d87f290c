// The explicit topology format: devices (name, kind, gpu, node, datacenter) and links (a cable `between` two
// devices, or one direction `from`/`to`) with bandwidth, latency and kind. Every error is located.
#include <fmt/format.h>

#include "engine/yaml_reader.h"
#include "topologies/topology_loader.h"

namespace clustersim::topo {

namespace {
Device read_device(const engine::YamlValue& d, Cluster& cluster) {
    d.expect_only_keys({"name", "kind", "gpu", "node", "datacenter", "forwards"});
    Device device;
    device.name = d.require("name").as_string();
    if (device.name.empty()) d.require("name").fail("expected a device name, got an empty string");
    const auto kind_node = d.require("kind");
    const auto kind = parse_device_kind(kind_node.as_string());
    if (!kind)
        kind_node.fail(fmt::format("unknown device kind '{}' (known: {})", kind_node.as_string(), device_kind_names()));
    device.kind = *kind;
    if (auto node = d.find("node")) {
        const auto v = node->as_int();
        if (v < 0 || v > (1 << 24)) node->fail(fmt::format("expected a node index from 0, got {}", v));
        device.node = static_cast<std::int32_t>(v);
    }
    if (auto dc = d.find("datacenter")) device.datacenter = static_cast<std::int32_t>(dc->as_int());
    const auto gpu = d.find("gpu");
    if (device.kind == DeviceKind::gpu) {
        if (!gpu) d.fail("missing required key 'gpu' (the GPU type, e.g. H100) for a device of kind gpu");
        const auto& catalogue = GpuCatalogue::builtin();
        const auto spec = catalogue.find(gpu->as_string());
        if (!spec) gpu->fail(fmt::format("unknown GPU '{}' (known: {})", gpu->as_string(), catalogue.names()));
        device.gpu_spec = cluster.add_gpu_spec(catalogue.gpus()[*spec]);
        if (device.node < 0) device.node = 0;
    } else if (gpu) {
        gpu->fail("'gpu' is only for devices of kind gpu");
    }
    if (auto forwards = d.find("forwards")) {
        // A GPU that forwards others' traffic (GPUs cabled directly in a ring or torus); switches always do.
        if (device.kind != DeviceKind::gpu) forwards->fail("'forwards' is only for devices of kind gpu");
        device.relays = forwards->as_bool();
    }
    return device;
}

DeviceId endpoint(const engine::YamlValue& v, const Cluster& cluster) {
    const std::string name = v.as_string();
    const auto id = cluster.find_device(name);
    if (!id) v.fail(fmt::format("link to unknown device '{}' (declare it under 'devices')", name));
    return *id;
}

void read_link(const engine::YamlValue& l, Cluster& cluster) {
    l.expect_only_keys({"between", "from", "to", "bandwidth", "latency", "kind"});
    const double bandwidth = l.require("bandwidth").as_rate();
    const engine::Time latency = l.require("latency").as_time();
    const auto kind_node = l.require("kind");
    const auto kind = parse_link_kind(kind_node.as_string());
    if (!kind)
        kind_node.fail(fmt::format("unknown link kind '{}' (known: {})", kind_node.as_string(), link_kind_names()));
    DeviceId a, b;
    bool cable = false;
    if (auto between = l.find("between")) {
        if (l.find("from") || l.find("to"))
            l.fail("a link has either 'between' (a cable) or 'from' and 'to', not both");
        const auto ends = between->elements();
        if (ends.size() != 2) between->fail(fmt::format("expected two device names, got {}", ends.size()));
        a = endpoint(ends[0], cluster);
        b = endpoint(ends[1], cluster);
        cable = true;
    } else {
        a = endpoint(l.require("from"), cluster);
        b = endpoint(l.require("to"), cluster);
    }
    if (a == b) l.fail(fmt::format("link from '{}' to itself", cluster.device(a).name));
    if (cable)
        cluster.add_cable(a, b, bandwidth, latency, *kind);
    else
        cluster.add_link(a, b, bandwidth, latency, *kind);
}
}  // namespace

Cluster load_explicit_topology(const engine::YamlValue& map) {
    map.expect_only_keys({"name", "devices", "links"});
    Cluster cluster;
    const auto devices = map.require("devices");
    for (const auto& d : devices.elements()) {
        Device device = read_device(d, cluster);
        if (cluster.find_device(device.name))
            d.require("name").fail(fmt::format("duplicate device name '{}'", device.name));
        cluster.add_device(std::move(device));
    }
    if (cluster.gpus().empty()) devices.fail("expected at least one device of kind gpu");
    for (const auto& l : map.require("links").elements()) read_link(l, cluster);
    const auto name = map.find("name");
    cluster.description = name ? name->as_string() : map.location().file;
    return cluster;
}

}  // namespace clustersim::topo
