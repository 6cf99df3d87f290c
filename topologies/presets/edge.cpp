// The edge preset: small accelerators (Jetson-class modules, each its own node with its CPU and network port) on one
// Ethernet or Wi-Fi-class switch, for pipeline or split training across devices on slow links.
#include <fmt/format.h>

#include "engine/error.h"
#include "topologies/presets/preset_registry.h"

namespace clustersim::topo {

Cluster build_edge(const engine::Params& params) {
    const auto n = params.integer("devices");
    if (n < 1 || n > (1 << 16)) params.fail("devices", "expected an integer from 1 to 65536");
    const auto& catalogue = GpuCatalogue::builtin();
    const auto spec = catalogue.find(params.string("gpu"));
    if (!spec) params.fail("gpu", fmt::format("unknown GPU '{}' (known: {})", params.string("gpu"), catalogue.names()));
    Cluster cluster;
    const GpuSpec& gpu = catalogue.gpus()[*spec];
    const std::int32_t index = cluster.add_gpu_spec(gpu);
    const double bandwidth = params.rate("bandwidth");
    const engine::Time latency = params.time("latency");
    if (!(bandwidth > 0)) params.fail("bandwidth", "expected a bandwidth above 0");
    const DeviceId sw = cluster.add_device(Device{"switch", DeviceKind::network_switch, -1, -1, 0, false});
    // On the module the GPU, the CPU and the network controller share the SoC's memory: their links run at its
    // bandwidth, with the presets' PCIe latency; the network port is the bottleneck.
    const double soc = gpu.hbm_bandwidth_bytes_per_s;
    const engine::Time on_chip{250'000};
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(n); ++i) {
        const DeviceId g = cluster.add_device(Device{fmt::format("dev{}.gpu", i), DeviceKind::gpu, i, index, 0, false});
        const DeviceId cpu = cluster.add_device(Device{fmt::format("dev{}.cpu", i), DeviceKind::cpu, i, -1, 0, false});
        const DeviceId nic = cluster.add_device(Device{fmt::format("dev{}.nic", i), DeviceKind::nic, i, -1, 0, false});
        cluster.add_cable(g, cpu, soc, on_chip, LinkKind::pcie);
        cluster.add_cable(cpu, nic, soc, on_chip, LinkKind::pcie);
        cluster.add_cable(nic, sw, bandwidth, latency, LinkKind::ethernet);
    }
    cluster.description = fmt::format("edge: {} {} on one switch ({}, {} per link)", n, params.string("gpu"),
                                      params.text("bandwidth"), params.text("latency"));
    return cluster;
}

}  // namespace clustersim::topo
