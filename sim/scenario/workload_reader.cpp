// Reading a scenario's workload: traces or a generator.
#include "sim/scenario/workload_reader.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/params.h"
#include "engine/units.h"
#include "sim/scenario/balanced_stages.h"
#include "traces/formats/trace_import.h"
#include "traces/pipeline_schedule.h"
#include "workloads/workload_registry.h"

namespace clustersim::sim {

namespace {

std::uint32_t positive_u32(const engine::YamlValue& v) {
    const std::int64_t x = v.as_int();
    if (x < 1 || x > UINT32_MAX) v.fail(fmt::format("expected a positive integer, got {}", x));
    return static_cast<std::uint32_t>(x);
}

}  // namespace

traces::OpGraph read_workload(const engine::YamlValue& workload, const std::string& scenario_path,
                              const topo::Cluster& cluster, std::size_t topology_gpus, std::string& description,
                              std::vector<std::string>& defaults) {
    if (auto trace = workload.find("trace")) {
        // A trace in any format import_traces reads: one file, or a list (one Kineto or Chakra file per rank),
        // relative to the scenario file.
        workload.expect_only_keys({"trace", "format", "world_size", "iteration", "drop_gaps", "replicas",
                                   "pipeline_schedule", "pipeline_chunks", "fill", "align", "comm_kernels"});
        std::vector<std::string> files;
        for (const engine::YamlValue& item : trace->is_sequence() ? trace->elements() : std::vector{*trace}) {
            std::filesystem::path file = item.as_string();
            if (file.is_relative()) file = std::filesystem::path(scenario_path).parent_path() / file;
            if (!std::filesystem::exists(file)) item.fail(fmt::format("trace file '{}' not found", file.string()));
            files.push_back(file.string());
        }
        if (files.empty()) trace->fail("expected a trace file or a list of them");
        traces::ImportOptions import;
        if (auto v = workload.find("format")) {
            import.format = v->as_string();
            const auto& names = traces::trace_format_names();
            if (std::find(names.begin(), names.end(), import.format) == names.end())
                v->fail(fmt::format("expected a trace format ({}), got \"{}\"", fmt::join(names, ", "), import.format));
        }
        if (auto v = workload.find("world_size")) import.world_size = positive_u32(*v);
        if (auto v = workload.find("iteration")) import.iteration = static_cast<int>(v->as_int());
        if (auto v = workload.find("drop_gaps")) import.keep_gaps = !v->as_bool();
        if (auto v = workload.find("fill")) {
            if (v->as_string() != "spmd" && v->as_string() != "fold")
                v->fail(fmt::format("expected spmd or fold, got \"{}\"", v->as_string()));
            import.fold = v->as_string() == "fold";
        }
        if (auto v = workload.find("align")) {
            const std::string align = v->as_string();
            if (align != "auto" && align != "clock" && align != "step" && align != "none")
                v->fail(fmt::format("expected auto, clock, step or none, got \"{}\"", align));
            import.align = align;
        }
        if (auto v = workload.find("comm_kernels"))
            for (const auto& e : v->elements()) import.comm_kernels.push_back(e.as_string());
        if (auto v = workload.find("replicas")) import.replicas = positive_u32(*v);
        if (auto v = workload.find("pipeline_schedule")) {
            const auto schedule = traces::parse_pipeline_schedule(v->as_string());
            if (!schedule) v->fail(fmt::format("expected 1f1b or gpipe, got \"{}\"", v->as_string()));
            import.schedule = *schedule;
        }
        if (auto v = workload.find("pipeline_chunks")) import.pipeline_chunks = positive_u32(*v);
        const std::string format = import.format == "auto" ? traces::detect_trace_format(files.front()) : import.format;
        description = fmt::format("{} trace {}{}", format, trace->is_sequence() ? files.front() : trace->as_string(),
                                  files.size() > 1 ? fmt::format(" (+{} files)", files.size() - 1) : "");
        return traces::import_traces(files, import);
    }
    const auto generator = workload.require("generator");
    const auto& entry = workloads::find_workload_generator(generator.as_string(), generator.location());
    engine::Params params = engine::Params::from_yaml(workload, entry.params);
    // A generator sized by the job ("dp: auto") gets the topology's GPU count unless the scenario gives one.
    const bool sized = std::any_of(entry.params.begin(), entry.params.end(),
                                   [](const engine::ParamSpec& p) { return p.name == "world_size"; });
    if (sized && params.location("world_size").file == "(default)")
        params.set("world_size", std::to_string(topology_gpus));
    // Defaults in effect, for resolved.yaml: the run it describes stays the same if a default changes later.
    // Sentinels that mean "derived" (0, -1, auto) stay out: the derived values are listed after the document.
    for (const auto& v : params.values()) {
        const bool sentinel = v.text.empty() || v.text == "0" || v.text == "-1" || v.text == "auto";
        if (v.spec->name != "generator" && v.where.file == "(default)" && !sentinel)
            defaults.push_back(fmt::format("workload.{}={}", v.spec->name, v.text));
    }
    std::string args;
    for (const auto& v : params.values()) {
        if (v.spec->name != "generator" && v.where.file != "(default)")
            args += fmt::format("{}{}={}", args.empty() ? "" : ", ", v.spec->name, v.text);
    }
    description = fmt::format("{} ({})", entry.name, args);
    if (entry.ranks) {  // a plan larger than the topology is refused before it is built
        const std::uint64_t ranks = entry.ranks(params);
        if (ranks > topology_gpus)
            workload.fail(fmt::format("the workload has {} ranks but the topology '{}' has {} GPUs", ranks,
                                      cluster.description, topology_gpus));
    }
    const std::string balanced = resolve_balanced_stages(params, cluster, entry.build);
    traces::OpGraph graph = entry.build(params);
    if (!balanced.empty()) graph.derived.push_back(balanced);
    // Generated sizes stay within what an op holds (256 TiB: a larger one is kept as too_large_bytes) and FLOPs
    // within what the clock can time: beyond, a plan's kernels and transfers would pass the clock's range.
    for (std::size_t i = 0; i < graph.ops.size(); ++i) {
        const traces::Op& op = graph.ops[i];
        const bool too_large = op.bytes() > traces::Op::max_op_bytes;
        if (too_large || op.flops() > 1e18)
            workload.fail(fmt::format(
                "{} would move {} and compute {:.3g} FLOPs: beyond 256 TiB or 1e18 FLOPs in "
                "one op; make the plan smaller",
                graph.describe(traces::OpId::from_index(i)),
                too_large ? "256 TiB or more" : engine::format_bytes(static_cast<double>(op.bytes())), op.flops()));
    }
    return graph;
}

}  // namespace clustersim::sim
