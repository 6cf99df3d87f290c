// GPU connectivity through a forwarding pivot: if every GPU reaches a device that forwards traffic, and that
// device reaches every GPU, every pair has a route through it (routes relay only through forwarding devices).
#include "topologies/connectivity.h"

#include "engine/units.h"

#include <algorithm>

#include <fmt/format.h>

namespace clustersim::topo {

namespace {

// Devices reached from `start` along links (forward) or against them (backward), expanding only through
// forwarding devices (and `start`), as routes do.
std::vector<std::uint8_t> reach(const Cluster& c, DeviceId start, bool forward) {
    std::vector<std::uint8_t> seen(c.devices().size(), 0);
    std::vector<DeviceId> stack{start};
    seen[start.index()] = 1;
    while (!stack.empty()) {
        const DeviceId d = stack.back();
        stack.pop_back();
        if (d != start && !forwards_traffic(c.device(d))) continue;
        for (const LinkId l : forward ? c.out_links(d) : c.in_links(d)) {
            const DeviceId next = forward ? c.link(l).dst : c.link(l).src;
            if (!seen[next.index()]) {
                seen[next.index()] = 1;
                stack.push_back(next);
            }
        }
    }
    return seen;
}

}  // namespace

void check_gpus_connected(const Cluster& cluster, const engine::SourceLocation& where) {
    const auto& gpus = cluster.gpus();
    if (gpus.size() < 2) return;
    const DeviceId first = gpus.front();
    std::vector<DeviceId> pivots;
    if (forwards_traffic(cluster.device(first))) pivots.push_back(first);
    for (const LinkId l : cluster.out_links(first))
        if (forwards_traffic(cluster.device(cluster.link(l).dst))) pivots.push_back(cluster.link(l).dst);
    std::string problem =
        fmt::format("GPU '{}' has no link to a device that forwards traffic", cluster.device(first).name);
    for (const DeviceId pivot : pivots) {
        const auto from = reach(cluster, pivot, true), to = reach(cluster, pivot, false);
        const auto unreachable = std::find_if(gpus.begin(), gpus.end(), [&](DeviceId g) { return !from[g.index()]; });
        const auto cut_off = std::find_if(gpus.begin(), gpus.end(), [&](DeviceId g) { return !to[g.index()]; });
        if (unreachable == gpus.end() && cut_off == gpus.end()) return;
        problem = unreachable != gpus.end() ? fmt::format("no route from '{}' to GPU '{}'", cluster.device(first).name,
                                                          cluster.device(*unreachable).name)
                                            : fmt::format("no route from GPU '{}' to '{}'",
                                                          cluster.device(*cut_off).name, cluster.device(first).name);
    }
    throw engine::InputError(where, fmt::format("the topology cannot carry traffic between all GPUs: {} (check the "
                                                "switches and spines, and that every cable goes both ways)",
                                                problem));
}

void check_link_ranges(const Cluster& cluster, const engine::SourceLocation& where) {
    for (const Link& link : cluster.links()) {
        const bool rate_ok = link.bandwidth_bytes_per_s >= 1e3 && link.bandwidth_bytes_per_s <= 1e15;
        const bool latency_ok = link.latency >= engine::Time{0} && link.latency <= engine::Time{10'000'000'000'000};
        if (rate_ok && latency_ok) continue;
        throw engine::InputError(
            where,
            fmt::format("link {} -> {}: {} (expected a bandwidth from 1 kB/s to 1 PB/s and a latency up to 10 s)",
                        cluster.device(link.src).name, cluster.device(link.dst).name,
                        rate_ok ? "latency " + engine::format_time(link.latency)
                                : fmt::format("bandwidth {:g} B/s", link.bandwidth_bytes_per_s)));
    }
}

}  // namespace clustersim::topo
