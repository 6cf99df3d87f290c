// The ring preset: GPUs each cabled to the next, the last to the first.
#include <fmt/format.h>

#include "engine/error.h"
#include "topologies/presets/direct_gpus.h"
#include "topologies/presets/preset_registry.h"

namespace clustersim::topo {

std::vector<DeviceId> add_direct_gpus(Cluster& cluster, const engine::Params& params, int count) {
    const auto& catalogue = GpuCatalogue::builtin();
    const auto spec = catalogue.find(params.string("gpu"));
    if (!spec) params.fail("gpu", fmt::format("unknown GPU '{}' (known: {})", params.string("gpu"), catalogue.names()));
    const std::int32_t index = cluster.add_gpu_spec(catalogue.gpus()[*spec]);
    std::vector<DeviceId> gpus;
    for (int i = 0; i < count; ++i)
        gpus.push_back(cluster.add_device(Device{fmt::format("gpu{}", i), DeviceKind::gpu, i, index, 0, true}));
    return gpus;
}

Cluster build_ring(const engine::Params& params) {
    const auto n = params.integer("gpus");
    if (n < 2 || n > (1 << 20)) params.fail("gpus", "expected an integer from 2 to 1048576");
    Cluster cluster;
    const auto gpus = add_direct_gpus(cluster, params, static_cast<int>(n));
    const double bandwidth = params.rate("bandwidth");
    const engine::Time latency = params.time("latency");
    // Two GPUs make one cable, not two parallel ones.
    const std::size_t cables = n == 2 ? 1 : gpus.size();
    for (std::size_t i = 0; i < cables; ++i)
        cluster.add_cable(gpus[i], gpus[(i + 1) % gpus.size()], bandwidth, latency, LinkKind::nvlink);
    cluster.description = fmt::format("ring of {} {} ({}, {} per link)", n, params.string("gpu"),
                                      params.text("bandwidth"), params.text("latency"));
    return cluster;
}

}  // namespace clustersim::topo
