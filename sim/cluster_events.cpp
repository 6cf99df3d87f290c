// Reading `system.events`.
#include "sim/cluster_events.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/yaml_reader.h"

namespace clustersim::sim {

namespace {

std::string trim(std::string s) {
    const auto first = s.find_first_not_of(" \t");
    const auto last = s.find_last_not_of(" \t");
    return first == std::string::npos ? std::string{} : s.substr(first, last - first + 1);
}

topo::DeviceId device_named(const engine::YamlValue& v, const topo::Cluster& cluster, const std::string& name) {
    const auto id = cluster.find_device(name);
    if (!id)
        v.fail(fmt::format("no device '{}' in the topology '{}' (`clustersim topo describe` lists its devices)", name,
                           cluster.description));
    return *id;
}

// "A -> B" or "A <-> B": the links from A to B (and back).
std::vector<topo::LinkId> links_named(const engine::YamlValue& v, const topo::Cluster& cluster) {
    const std::string text = v.as_string();
    const bool both = text.find("<->") != std::string::npos;
    const auto arrow = both ? text.find("<->") : text.find("->");
    if (arrow == std::string::npos)
        v.fail(fmt::format("expected a link as \"A -> B\" or \"A <-> B\" (device names), got \"{}\"", text));
    const topo::DeviceId a = device_named(v, cluster, trim(text.substr(0, arrow)));
    const topo::DeviceId b = device_named(v, cluster, trim(text.substr(arrow + (both ? 3 : 2))));
    std::vector<topo::LinkId> links;
    for (const topo::LinkId l : cluster.out_links(a))
        if (cluster.link(l).dst == b) links.push_back(l);
    if (both)
        for (const topo::LinkId l : cluster.out_links(b))
            if (cluster.link(l).dst == a) links.push_back(l);
    if (links.empty()) v.fail(fmt::format("no link {} in the topology '{}'", text, cluster.description));
    return links;
}

}  // namespace

std::vector<ClusterEvent> read_cluster_events(const engine::YamlValue& events, const topo::Cluster& cluster) {
    std::vector<ClusterEvent> out;
    for (const engine::YamlValue& e : events.elements()) {
        e.expect_only_keys({"at", "until", "link", "device", "gpu", "bandwidth", "down"});
        ClusterEvent ev;
        ev.where = e.location();
        ev.at = e.require("at").as_time();
        if (ev.at < engine::Time{0}) e.require("at").fail("expected a time from 0");
        const int targets = (e.find("link") ? 1 : 0) + (e.find("device") ? 1 : 0) + (e.find("gpu") ? 1 : 0);
        if (targets != 1) e.fail("expected one of link, device or gpu");
        const bool down = e.find("down") && e.require("down").as_bool();
        if (down == static_cast<bool>(e.find("bandwidth")))
            e.fail("expected either down: true or bandwidth: FACTOR (0 < FACTOR, 0.5: half the link's bandwidth)");
        std::string what;
        if (auto g = e.find("gpu")) {
            if (!down) g->fail("a GPU can only fail (down: true)");
            if (e.find("until")) e.require("until").fail("a failed GPU does not come back within a run");
            const std::int64_t gpu = g->as_int();
            if (gpu < 0 || static_cast<std::size_t>(gpu) >= cluster.gpus().size())
                g->fail(fmt::format("expected a GPU index from 0 to {}", cluster.gpus().size() - 1));
            ev.kind = ClusterEvent::Kind::gpu_down;
            ev.gpu = static_cast<std::uint32_t>(gpu);
            ev.label = fmt::format("GPU {} ({}) fails", gpu, cluster.device(cluster.gpus()[ev.gpu]).name);
            out.push_back(ev);
            continue;
        }
        if (auto l = e.find("link")) {
            ev.links = links_named(*l, cluster);
            what = l->as_string();
        } else {
            const auto d = e.require("device");
            const topo::DeviceId id = device_named(d, cluster, d.as_string());
            for (const topo::LinkId link : cluster.out_links(id)) ev.links.push_back(link);
            for (const topo::LinkId link : cluster.in_links(id)) ev.links.push_back(link);
            what = d.as_string();
        }
        if (down) {
            ev.factor = 0;
            ev.label = what + " down";
        } else {
            const auto b = e.require("bandwidth");
            ev.factor = b.as_double();
            if (!(ev.factor > 0 && ev.factor <= 1000))
                b.fail("expected a factor above 0 (0.5: half the link's bandwidth; use down: true for a failure)");
            ev.label = fmt::format("{} at {:g}% bandwidth", what, 100 * ev.factor);
        }
        out.push_back(ev);
        if (auto u = e.find("until")) {
            ClusterEvent back = ev;
            back.at = u->as_time();
            if (back.at <= ev.at) u->fail("expected a time after 'at'");
            back.factor = 1;
            back.label = what + " restored";
            back.where = u->location();
            out.push_back(back);
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const ClusterEvent& a, const ClusterEvent& b) { return a.at < b.at; });
    return out;
}

}  // namespace clustersim::sim
