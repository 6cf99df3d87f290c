// Cluster construction: devices, links, and the Boost.Graph view kept in step with the flat arrays.
#include "topologies/cluster.h"

#include <algorithm>

#include "engine/error.h"
#include "engine/memory_budget.h"
#include "topologies/cluster_graph.h"

namespace clustersim::topo {

Cluster::Cluster() : graph_(std::make_unique<ClusterGraph>()) {}
Cluster::~Cluster() = default;
Cluster::Cluster(Cluster&&) noexcept = default;
Cluster& Cluster::operator=(Cluster&&) noexcept = default;

std::int32_t Cluster::add_gpu_spec(const GpuSpec& spec) {
    for (std::size_t i = 0; i < gpu_specs_.size(); ++i) {
        if (gpu_specs_[i].name == spec.name) return static_cast<std::int32_t>(i);
    }
    gpu_specs_.push_back(spec);
    return static_cast<std::int32_t>(gpu_specs_.size() - 1);
}

namespace {
// About what a device or a link costs here and in what is built over them (routing, the flow network), for the
// memory budget: a topology past it is refused while it is built, before it exhausts memory.
constexpr double bytes_per_element = 300;

void check_size(std::size_t devices, std::size_t links) {
    const double bytes = bytes_per_element * static_cast<double>(devices + links);
    if (bytes > static_cast<double>(engine::memory_budget()))
        throw engine::InputError(
            fmt::format("the topology grows past {} devices and {} links, about {}: beyond the "
                        "memory budget of {} (--max-memory); fewer nodes or spines",
                        devices, links, engine::format_memory(bytes),
                        engine::format_memory(static_cast<double>(engine::memory_budget()))));
}
}  // namespace

DeviceId Cluster::add_device(Device device) {
    if (devices_.size() % 1024 == 0) check_size(devices_.size(), links_.size());
    CLUSTERSIM_CHECK(!by_name_.contains(device.name), "duplicate device name '{}'", device.name);
    CLUSTERSIM_CHECK(device.kind != DeviceKind::gpu ||
                         (device.gpu_spec >= 0 && static_cast<std::size_t>(device.gpu_spec) < gpu_specs_.size()),
                     "GPU '{}' without a known spec", device.name);
    const auto id = DeviceId::from_index(devices_.size());
    by_name_.emplace(device.name, id);
    node_count_ = std::max(node_count_, device.node + 1);
    if (device.kind == DeviceKind::gpu) gpus_.push_back(id);
    devices_.push_back(std::move(device));
    out_links_.emplace_back();
    in_links_.emplace_back();
    boost::add_vertex(graph_->graph);
    return id;
}

LinkId Cluster::add_link(DeviceId src, DeviceId dst, double bandwidth_bytes_per_s, engine::Time latency,
                         LinkKind kind) {
    CLUSTERSIM_CHECK(src.index() < devices_.size() && dst.index() < devices_.size(), "link between unknown devices");
    CLUSTERSIM_CHECK(src != dst, "link from '{}' to itself", devices_[src.index()].name);
    CLUSTERSIM_CHECK(bandwidth_bytes_per_s > 0, "link without bandwidth");
    CLUSTERSIM_CHECK(latency >= engine::zero_time, "negative link latency");
    if (links_.size() % 1024 == 0) check_size(devices_.size(), links_.size());
    const auto id = LinkId::from_index(links_.size());
    links_.push_back(Link{src, dst, bandwidth_bytes_per_s, latency, kind});
    out_links_[src.index()].push_back(id);
    in_links_[dst.index()].push_back(id);
    boost::add_edge(src.index(), dst.index(), LinkProperty{id}, graph_->graph);
    return id;
}

LinkId Cluster::add_cable(DeviceId a, DeviceId b, double bandwidth_bytes_per_s, engine::Time latency, LinkKind kind) {
    const LinkId forward = add_link(a, b, bandwidth_bytes_per_s, latency, kind);
    add_link(b, a, bandwidth_bytes_per_s, latency, kind);
    return forward;
}

const GpuSpec& Cluster::gpu_spec(DeviceId gpu) const {
    const Device& d = devices_[gpu.index()];
    CLUSTERSIM_CHECK(d.kind == DeviceKind::gpu, "'{}' is not a GPU", d.name);
    return gpu_specs_[static_cast<std::size_t>(d.gpu_spec)];
}

std::optional<DeviceId> Cluster::find_device(const std::string& name) const {
    const auto it = by_name_.find(name);
    if (it == by_name_.end()) return std::nullopt;
    return it->second;
}

}  // namespace clustersim::topo
