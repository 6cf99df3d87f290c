// `clustersim topo describe|dot|list`: inspect a topology preset or file without simulating anything.
#include <cstdio>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "engine/units.h"
#include "tools/cli/commands.h"
#include "topologies/presets/preset_registry.h"
#include "topologies/topology_loader.h"
#include "topologies/topology_summary.h"

namespace clustersim::cli {

namespace {

struct TopoOptions {
    std::string topology;
    std::vector<std::string> overrides;
};

void print_counts(const char* title, const std::map<std::string, int>& counts) {
    std::string line;
    for (const auto& [name, n] : counts) line += fmt::format("{}{} {}", line.empty() ? "" : ", ", n, name);
    std::printf("%-22s %s\n", title, line.c_str());
}

void describe(const TopoOptions& o) {
    const topo::Cluster cluster = topo::load_topology(o.topology, o.overrides);
    const topo::TopologySummary s = topo::summarize(cluster);
    std::printf("%-22s %s\n", "topology", cluster.description.c_str());
    print_counts("devices", s.devices_by_kind);
    print_counts("links (directed)", s.links_by_kind);
    print_counts("GPUs", s.gpus_by_type);
    if (s.gpus_per_node_min == s.gpus_per_node_max)
        std::printf("%-22s %d nodes x %d GPUs\n", "nodes", s.nodes, s.gpus_per_node_min);
    else
        std::printf("%-22s %d nodes x %d to %d GPUs\n", "nodes", s.nodes, s.gpus_per_node_min, s.gpus_per_node_max);
    std::printf("%-22s %s one way (max-flow, GPUs [0, n/2) to [n/2, n))\n", "bisection bandwidth",
                engine::format_rate(s.bisection_bandwidth).c_str());
    if (s.diameter_destinations == cluster.gpus().size())
        std::printf("%-22s %d links between GPUs\n", "diameter", s.diameter_hops);
    else
        std::printf(
            "%-22s %d links between GPUs (paths to %zu of the %zu GPUs: the first and last node's and an "
            "even stride)\n",
            "diameter", s.diameter_hops, s.diameter_destinations, cluster.gpus().size());
    if (s.farthest_src.valid()) {
        std::printf("%-22s %s -> %s, %zu links, latency %s\n", "farthest GPUs",
                    cluster.device(s.farthest_src).name.c_str(), cluster.device(s.farthest_dst).name.c_str(),
                    s.farthest_route.size(), engine::format_time(s.farthest_latency).c_str());
        std::string route = cluster.device(s.farthest_src).name;
        for (const topo::LinkId l : s.farthest_route) {
            const topo::Link& link = cluster.link(l);
            route += fmt::format(" -[{} {}]-> {}", topo::link_kind_name(link.kind),
                                 engine::format_rate(link.bandwidth_bytes_per_s), cluster.device(link.dst).name);
        }
        std::printf("%-22s %s\n", "route", route.c_str());
    }
}

void list_presets() {
    for (const auto& p : topo::topology_presets()) {
        std::printf("%s\n    %s\n", p.name.c_str(), p.summary.c_str());
        for (const auto& spec : p.params) {
            if (spec.name == "preset") continue;
            std::printf("    %-18s %-8s default %-18s %s\n", spec.name.c_str(), engine::param_type_name(spec.type),
                        spec.required                ? "(required)"
                        : spec.default_value.empty() ? "(server's own)"
                                                     : ("\"" + spec.default_value + "\"").c_str(),
                        spec.help.c_str());
        }
    }
}

void add_topology_arguments(CLI::App* cmd, TopoOptions& o) {
    cmd->add_option("topology", o.topology, "A preset name (see `clustersim topo list`) or a topology YAML file")
        ->required();
    cmd->add_option("--set", o.overrides, "Override a parameter, key=value (repeatable), e.g. --set nodes=4");
}

}  // namespace

void add_topo_command(CLI::App& app) {
    auto* topo_cmd =
        app.add_subcommand("topo", "Inspect topologies: list presets, describe one, draw it with Graphviz");
    topo_cmd->require_subcommand(1);
    auto options = std::make_shared<TopoOptions>();

    auto* describe_cmd = topo_cmd->add_subcommand(
        "describe",
        "Device and link counts, GPUs per node, bisection bandwidth, diameter, farthest route.\n"
        "Example: clustersim topo describe dgx-h100 --set nodes=4 --set fabric=leaf-spine");
    add_topology_arguments(describe_cmd, *options);
    describe_cmd->callback([options] { describe(*options); });

    auto* dot_cmd = topo_cmd->add_subcommand(
        "dot", "Graphviz text on stdout.\nExample: clustersim topo dot dgx1-v100 | dot -Tsvg > dgx1.svg");
    add_topology_arguments(dot_cmd, *options);
    dot_cmd->callback([options] {
        const std::string text = topo::to_graphviz(topo::load_topology(options->topology, options->overrides));
        std::fwrite(text.data(), 1, text.size(), stdout);
    });

    auto* list_cmd = topo_cmd->add_subcommand("list", "Presets with their parameters, types and defaults");
    list_cmd->callback([] { list_presets(); });
}

}  // namespace clustersim::cli
