// Scenario loading (every key checked and located), the run, and its output files.
#include "sim/scenario.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <spdlog/spdlog.h>
#include "engine/atomic_file.h"

#include "engine/log.h"
#include "engine/params.h"
#include "engine/units.h"
#include "engine/yaml_reader.h"
#include "sim/analysis.h"
#include "sim/collective_calls.h"
#include "sim/memory_model.h"
#include "sim/samples.h"
#include "sim/training_metrics.h"
#include "topologies/topology_loader.h"
#include "traces/formats/trace_import.h"
#include "traces/iterations.h"
#include "traces/perfetto_writer.h"
#include "traces/report/html_report.h"
#include "traces/summary_writers.h"
#include "workloads/workload_registry.h"

namespace clustersim::sim {

namespace {

std::uint32_t positive_u32(const engine::YamlValue& v) {
    const std::int64_t x = v.as_int();
    if (x < 1 || x > UINT32_MAX) v.fail(fmt::format("expected a positive integer, got {}", x));
    return static_cast<std::uint32_t>(x);
}

traces::OpGraph read_workload(const engine::YamlValue& workload, const std::string& scenario_path,
                              const topo::Cluster& cluster, std::string& description,
                              std::vector<std::string>& defaults) {
    const std::size_t topology_gpus = cluster.gpus().size();
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
    traces::OpGraph graph = entry.build(params);
    // Generated sizes stay within what inputs may give (1 PiB, as engine/units.h) and FLOPs within what the clock
    // can time: beyond, a plan's kernels and transfers would pass the clock's range.
    for (std::size_t i = 0; i < graph.ops.size(); ++i) {
        const traces::Op& op = graph.ops[i];
        if (static_cast<double>(op.bytes) > 0x1p50 || op.flops > 1e18)
            workload.fail(
                fmt::format("{} would move {} and compute {:.3g} FLOPs: beyond 1 PiB or 1e18 FLOPs in "
                            "one op; make the plan smaller",
                            graph.describe(traces::OpId::from_index(i)),
                            engine::format_bytes(static_cast<double>(op.bytes)), op.flops));
    }
    return graph;
}

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
    engine::YamlValue doc = engine::YamlValue::load_file(path);
    for (const auto& o : overrides) doc.apply_override(o);
    doc.expect_only_keys({"name", "description", "topology", "workload", "system", "outputs"});
    Scenario s;
    s.source = path;
    s.name = doc.find("name") ? doc.require("name").as_string() : std::filesystem::path(path).stem().string();
    // The name becomes the output folder out/<name>: one plain path component.
    const bool plain =
        !s.name.empty() && s.name != "." && s.name != ".." && s.name.find_first_of("/\\") == std::string::npos &&
        std::all_of(s.name.begin(), s.name.end(), [](unsigned char c) { return c >= 0x20 && c != 0x7f; });
    if (!plain) {
        const std::string message = fmt::format(
            "expected a name without '/', '\\' or control characters, and not '.' or '..' (it names the output "
            "folder out/<name>), got \"{}\"",
            s.name);
        if (doc.find("name")) doc.require("name").fail(message);
        throw engine::InputError(engine::SourceLocation{path}, message);
    }
    s.cluster = topo::load_topology(doc.require("topology"));
    std::vector<std::string> workload_defaults;
    s.graph = read_workload(doc.require("workload"), path, s.cluster, s.workload_description, workload_defaults);
    traces::validate(s.graph);
    if (s.graph.job_size() > s.cluster.gpus().size())
        doc.require("workload")
            .fail(fmt::format("the workload has {} ranks but the topology '{}' has {} GPUs", s.graph.job_size(),
                              s.cluster.description, s.cluster.gpus().size()));
    if (auto system = doc.find("system")) {
        read_system(*system, s.options, s.repetition);
        if (auto v = system->find("events")) s.options.cluster_events = read_cluster_events(*v, s.cluster);
        if (auto v = system->find("rank_to_gpu")) {
            const auto& map = s.options.rank_to_gpu;
            if (map.size() != s.graph.rank_count)
                v->fail(fmt::format("expected one GPU per rank ({} ranks), got {}", s.graph.rank_count, map.size()));
            std::vector<std::uint8_t> used(s.cluster.gpus().size(), 0);
            for (std::size_t r = 0; r < map.size(); ++r) {
                if (map[r] >= used.size())
                    v->fail(fmt::format("rank {}: GPU {} does not exist (the topology has {} GPUs)", r, map[r],
                                        used.size()));
                if (used[map[r]]++) v->fail(fmt::format("rank {}: GPU {} is given to two ranks", r, map[r]));
            }
        }
        if (auto v = system->find("memory_check")) {
            if (v->as_string() != "error" && v->as_string() != "warn")
                v->fail(fmt::format("expected error or warn, got \"{}\"", v->as_string()));
            s.memory_check = v->as_string() == "warn" ? MemoryCheck::warn : MemoryCheck::error;
        }
    }
    // Memory before simulating: a plan that does not fit is refused with the worst rank's breakdown.
    s.memory = memory_peaks(s.graph, s.cluster, s.options.rank_to_gpu);
    if (const traces::RankMemory* worst = worst_overflow(s.memory)) {
        const std::string message =
            fmt::format("the plan does not fit in GPU memory: {} (set system.memory_check: warn to run it anyway)",
                        describe_memory(*worst));
        if (s.memory_check == MemoryCheck::error) doc.require("workload").fail(message);
        engine::layer_log("sim").warn("{}: {}", path, message);
    }
    apply_iterations(s);
    if (auto outputs = doc.find("outputs")) {
        outputs->expect_only_keys({"perfetto", "link_counters", "report"});
        if (auto v = outputs->find("perfetto")) s.outputs.perfetto = v->as_bool();
        if (auto v = outputs->find("report")) s.outputs.report = v->as_bool();
        if (auto v = outputs->find("link_counters"))
            s.outputs.link_counters = static_cast<std::size_t>(std::max<std::int64_t>(0, v->as_int()));
    }
    // resolved.yaml runs again from anywhere: trace paths relative to the scenario become absolute.
    if (auto workload = doc.find("workload"); workload && workload->find("trace")) {
        const engine::YamlValue trace = workload->require("trace");
        auto absolute = [&](const engine::YamlValue& item) {
            std::filesystem::path file = item.as_string();
            if (file.is_relative()) file = std::filesystem::absolute(std::filesystem::path(path).parent_path() / file);
            std::string quoted = "\"";
            for (const char c : file.lexically_normal().string()) {
                if (c == '"' || c == '\\') quoted += '\\';
                quoted += c;
            }
            return quoted + "\"";
        };
        std::string value;
        if (trace.is_sequence()) {
            for (const auto& item : trace.elements()) value += (value.empty() ? "" : ", ") + absolute(item);
            value = "[" + value + "]";
        } else {
            value = absolute(trace);
        }
        doc.apply_override("workload.trace=" + value);
    }
    for (const auto& assignment : workload_defaults) doc.apply_override(assignment);
    s.resolved_yaml = doc.dump();
    if (!s.graph.derived.empty()) {
        s.resolved_yaml += "\n# derived from the workload's parameters:\n";
        for (const auto& line : s.graph.derived) s.resolved_yaml += "#   " + line + "\n";
    }
    return s;
}

void apply_iterations(Scenario& scenario) {
    if (scenario.repetition.iterations <= 1 || scenario.graph.iteration_count() > 1) return;
    scenario.graph = traces::repeat_iterations(scenario.graph, scenario.repetition.iterations, scenario.source);
}

RunResult run_scenario(const Scenario& scenario, unsigned threads) {
    RunResult r;
    auto& log = engine::layer_log("sim");
    log.debug("{}: replaying {} ranks, {} ops, {} communicators", scenario.name, scenario.graph.rank_count,
              scenario.graph.ops.size(), scenario.graph.comms.size());
    r.replay = replay(scenario.graph, scenario.cluster, scenario.options);
    if (log.should_log(spdlog::level::debug)) {
        // -v: one line per collective call, in creation order.
        for (const CollectiveRecord& c : r.replay.collectives)
            log.debug("collective on '{}': {}/{}, members arrived {} .. {}, done {} (NCCL's model {:.1f} us)",
                      scenario.graph.comms[c.comm.index()].name, collective_algorithms()[c.algorithm].name,
                      c.modelled_protocol ? nccl_protocol_name(c.protocol) : "-", engine::format_time(c.first_arrival),
                      engine::format_time(c.last_arrival), engine::format_time(c.end), c.nccl_predicted_us);
    }
    log.debug("{}: {} events, {} flows, makespan {}", scenario.name, r.replay.events, r.replay.flows,
              engine::format_time(r.replay.timeline.makespan));
    r.summary = summarize_run(scenario.graph, r.replay.timeline);
    r.summary.scenario = scenario.name;
    r.summary.topology = scenario.cluster.description;
    r.summary.workload = scenario.workload_description;
    r.summary.events = r.replay.events;
    r.summary.flows = r.replay.flows;
    r.summary.bytes_on_network = r.replay.bytes_on_network;
    r.summary.training =
        training_metrics(scenario.graph, scenario.cluster, r.replay.timeline, scenario.options.rank_to_gpu);
    r.summary.memory = scenario.memory;
    r.summary.collectives = collective_calls(scenario.graph, r.replay.collectives);
    if (scenario.graph.iteration_count() > 1)
        r.summary.iteration_ends = traces::iteration_ends(scenario.graph, r.replay.timeline);
    if (scenario.repetition.samples > 1) {
        if (!scenario.options.variability.jitter.active())
            log.warn("{}: {} samples without jitter are all the same run (add system.jitter)", scenario.name,
                     scenario.repetition.samples);
        const unsigned cores = threads ? threads : std::max(1U, std::thread::hardware_concurrency());
        r.summary.samples =
            run_samples(scenario.graph, scenario.cluster, scenario.options, scenario.repetition.samples,
                        sample_facts(scenario.graph, r.replay.timeline, r.summary.critical_path), cores);
    }
    return r;
}

void prepare_output_dir(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir))
        throw engine::InputError(engine::SourceLocation{dir}, fmt::format("cannot create the output folder: {}",
                                                                          ec ? ec.message() : "not a folder"));
    const std::filesystem::path probe = std::filesystem::path(dir) / ".clustersim-write-check";
    {
        std::ofstream out(probe);
        if (!out) throw engine::InputError(engine::SourceLocation{dir}, "cannot write into the output folder");
    }
    std::filesystem::remove(probe, ec);
}

void write_outputs(const Scenario& scenario, const RunResult& result, const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
        throw engine::InputError(engine::SourceLocation{dir},
                                 fmt::format("cannot create the output folder: {}", ec.message()));
    const std::filesystem::path out(dir);
    if (scenario.outputs.perfetto) {
        traces::PerfettoOptions options;
        options.max_link_counters = scenario.outputs.link_counters;
        const auto& gpus = scenario.cluster.gpus();
        for (std::uint32_t r = 0; r < scenario.graph.rank_count; ++r) {
            const traces::RankId rank{r};
            const std::uint32_t gpu =
                scenario.options.rank_to_gpu.empty() ? scenario.graph.job_rank(rank) : scenario.options.rank_to_gpu[r];
            const std::string& name = scenario.cluster.device(gpus[gpu]).name;
            options.rank_labels.push_back(scenario.graph.job_ranks.empty()
                                              ? name
                                              : fmt::format("job rank {}, {}", scenario.graph.job_rank(rank), name));
        }
        engine::write_file_atomically(out / "timeline.json",
                                      traces::perfetto_json(scenario.graph, result.replay.timeline, options));
    } else {
        std::filesystem::remove(out / "timeline.json", ec);  // a run owns its folder: no stale timeline beside it
    }
    engine::write_file_atomically(out / "summary.json", traces::summary_json(result.summary, scenario.graph));
    engine::write_file_atomically(out / "ranks.csv", traces::ranks_csv(result.summary));
    if (!scenario.resolved_yaml.empty()) engine::write_file_atomically(out / "resolved.yaml", scenario.resolved_yaml);
    if (scenario.outputs.report) write_report(scenario, result, dir);
}

void write_report(const Scenario& scenario, const RunResult& result, const std::string& dir,
                  const std::vector<traces::report::ReportRun>& beside) {
    std::vector<traces::report::ReportRun> runs{{"simulated", &result.summary, &result.replay.timeline}};
    runs.insert(runs.end(), beside.begin(), beside.end());
    traces::report::ReportOptions options;
    options.title = fmt::format("clustersim: {}", scenario.name);
    engine::write_file_atomically(std::filesystem::path(dir) / "report.html",
                                  traces::report::html_report(scenario.graph, runs, options));
}

}  // namespace clustersim::sim
