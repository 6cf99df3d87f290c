// The torus preset: GPUs on a 2D or 3D grid, each cabled to its neighbours with wrap-around in every dimension.
#include <charconv>

#include <fmt/format.h>

#include "topologies/presets/direct_gpus.h"
#include "topologies/presets/preset_registry.h"

namespace clustersim::topo {

Cluster build_torus(const engine::Params& params) {
    const std::string& text = params.string("dims");
    std::vector<int> dims;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto end = std::min(text.find('x', start), text.size());
        int d = 0;
        const auto [p, ec] = std::from_chars(text.data() + start, text.data() + end, d);
        if (ec != std::errc() || p != text.data() + end || d < 2 || d > 4096)
            params.fail(
                "dims",
                fmt::format("expected dimensions like \"4x4\" or \"4x4x4\" (each 2 to 4096), got \"{}\"", text));
        dims.push_back(d);
        start = end + 1;
    }
    if (dims.size() < 2 || dims.size() > 3)
        params.fail("dims", fmt::format("expected 2 or 3 dimensions, got \"{}\"", text));
    long total = 1;
    for (int d : dims) total *= d;
    if (total > (1 << 20)) params.fail("dims", "more than 1,048,576 GPUs");
    Cluster cluster;
    const auto gpus = add_direct_gpus(cluster, params, static_cast<int>(total));
    const double bandwidth = params.rate("bandwidth");
    const engine::Time latency = params.time("latency");
    // Index = x + dims[0] * (y + dims[1] * z). Each GPU cables to its + neighbour in every dimension; a
    // dimension of 2 has one neighbour, not two parallel cables.
    long stride = 1;
    for (std::size_t axis = 0; axis < dims.size(); ++axis) {
        const long d = dims[axis];
        for (long i = 0; i < total; ++i) {
            const long coord = (i / stride) % d;
            if (d == 2 && coord == 1) continue;
            const long next = i - coord * stride + ((coord + 1) % d) * stride;
            cluster.add_cable(gpus[static_cast<std::size_t>(i)], gpus[static_cast<std::size_t>(next)], bandwidth,
                              latency, LinkKind::nvlink);
        }
        stride *= d;
    }
    cluster.description = fmt::format("{} torus of {} ({}, {} per link)", text, params.string("gpu"),
                                      params.text("bandwidth"), params.text("latency"));
    return cluster;
}

}  // namespace clustersim::topo
