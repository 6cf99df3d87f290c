// The hardware graph: devices and directed links, held both as a Boost.Graph adjacency_list (for graph
// algorithms: max-flow, Graphviz) and as flat arrays indexed by DeviceId / LinkId (for everything on a hot path).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "topologies/device.h"
#include "topologies/gpu_spec.h"
#include "topologies/link.h"

namespace clustersim::topo {

struct ClusterGraph;  // the Boost.Graph view, in cluster_graph.h (include only where Boost is wanted)

class Cluster {
public:
    Cluster();
    ~Cluster();
    Cluster(Cluster&&) noexcept;
    Cluster& operator=(Cluster&&) noexcept;

    /// Adds a GPU type (deduplicated by name) and returns its index for Device::gpu_spec.
    std::int32_t add_gpu_spec(const GpuSpec& spec);
    /// Adds a device; its name must be new (callers that read user input check first with find_device).
    DeviceId add_device(Device device);
    /// Adds one directed link.
    LinkId add_link(DeviceId src, DeviceId dst, double bandwidth_bytes_per_s, engine::Time latency, LinkKind kind);
    /// Adds a cable: two links, src->dst then dst->src, with the same bandwidth per direction.
    LinkId add_cable(DeviceId a, DeviceId b, double bandwidth_bytes_per_s, engine::Time latency, LinkKind kind);

    [[nodiscard]] const std::vector<Device>& devices() const { return devices_; }
    [[nodiscard]] const std::vector<Link>& links() const { return links_; }
    [[nodiscard]] const Device& device(DeviceId id) const { return devices_[id.index()]; }
    [[nodiscard]] const Link& link(LinkId id) const { return links_[id.index()]; }
    [[nodiscard]] std::span<const LinkId> out_links(DeviceId id) const { return out_links_[id.index()]; }
    [[nodiscard]] std::span<const LinkId> in_links(DeviceId id) const { return in_links_[id.index()]; }
    /// GPUs in rank order (the order they were added).
    [[nodiscard]] const std::vector<DeviceId>& gpus() const { return gpus_; }
    [[nodiscard]] const GpuSpec& gpu_spec(DeviceId gpu) const;
    [[nodiscard]] const std::vector<GpuSpec>& gpu_specs() const { return gpu_specs_; }
    [[nodiscard]] std::optional<DeviceId> find_device(const std::string& name) const;
    /// Number of servers (1 + the largest node index of any device).
    [[nodiscard]] int node_count() const { return node_count_; }
    /// "dgx-h100 (nodes=2, ...)" or the file it came from; set by the loader.
    std::string description;

    [[nodiscard]] const ClusterGraph& graph() const { return *graph_; }

private:
    std::vector<Device> devices_;
    std::vector<Link> links_;
    std::vector<std::vector<LinkId>> out_links_;
    std::vector<std::vector<LinkId>> in_links_;
    std::vector<DeviceId> gpus_;
    std::vector<GpuSpec> gpu_specs_;
    std::map<std::string, DeviceId, std::less<>> by_name_;
    int node_count_ = 0;
    std::unique_ptr<ClusterGraph> graph_;
};

}  // namespace clustersim::topo
