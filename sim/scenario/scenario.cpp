// Scenario loading (every key checked and located), the run, and its output files.
#include "sim/scenario/scenario.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <spdlog/spdlog.h>

#include "engine/atomic_file.h"
#include "engine/log.h"
#include "engine/phase_timer.h"
#include "engine/units.h"
#include "engine/yaml_reader.h"
#include "sim/analysis.h"
#include "sim/collective_calls.h"
#include "sim/memory_model.h"
#include "sim/pipeline_stages.h"
#include "sim/scenario/round_deadline.h"
#include "sim/scenario/samples.h"
#include "sim/scenario/workload_reader.h"
#include "sim/training_metrics.h"
#include "topologies/topology_loader.h"
#include "traces/iterations.h"
#include "traces/perfetto_writer.h"
#include "traces/report/html_report.h"
#include "traces/summary_writers.h"

namespace clustersim::sim {

namespace {

// Collective calls -v lists, one line each (-vv: all of them).
constexpr std::size_t max_logged_calls = 1000;

// `jobs:`: each job's workload on its GPUs (a list, or a count placed by a policy) from its start time, merged.
void read_jobs(const engine::YamlValue& list, const engine::YamlValue& doc, const std::string& path, Scenario& s,
               std::vector<std::string>& defaults) {
    std::uint64_t seed = 1;
    if (auto system = doc.find("system"))
        if (auto v = system->find("seed")) seed = static_cast<std::uint64_t>(std::max<std::int64_t>(0, v->as_int()));
    std::vector<Job> jobs;
    std::vector<std::uint8_t> used(s.cluster.gpus().size(), 0);
    const auto elements = list.elements();
    if (elements.empty()) list.fail("expected a list of jobs, each with a name, a workload and its gpus");
    for (std::size_t k = 0; k < elements.size(); ++k) {
        const engine::YamlValue& e = elements[k];
        e.expect_only_keys({"name", "workload", "gpus", "placement", "start"});
        Job job;
        const auto name = e.require("name");
        job.name = name.as_string();
        if (job.name.empty() || job.name.find_first_of("/ ") != std::string::npos)
            name.fail("expected a name without '/' or spaces");
        for (const Job& other : jobs)
            if (other.name == job.name) name.fail(fmt::format("a second job named '{}'", job.name));
        if (auto v = e.find("start")) job.start = v->as_time();
        if (job.start < engine::Time{0}) e.require("start").fail("expected a time from 0");
        const auto gpus = e.require("gpus");
        if (gpus.is_sequence()) {
            if (e.find("placement")) e.require("placement").fail("a placement policy places a GPU count, not a list");
            for (const auto& g : gpus.elements()) {
                const std::int64_t gpu = g.as_int();
                if (gpu < 0 || static_cast<std::size_t>(gpu) >= used.size())
                    g.fail(fmt::format("expected a GPU index from 0 to {}", used.size() - 1));
                if (used[gpu]++) g.fail(fmt::format("GPU {} is already given to a job", gpu));
                job.gpus.push_back(static_cast<std::uint32_t>(gpu));
            }
            if (job.gpus.empty()) gpus.fail("expected GPU indices or a count");
        } else {
            const std::int64_t count = gpus.as_int();
            if (count < 1 || static_cast<std::size_t>(count) > used.size())
                gpus.fail(fmt::format("expected a GPU count from 1 to {}", used.size()));
            Placement placement = Placement::packed;
            if (auto v = e.find("placement")) {
                const std::string p = v->as_string();
                if (p == "spread")
                    placement = Placement::spread;
                else if (p == "random")
                    placement = Placement::random;
                else if (p != "packed")
                    v->fail(fmt::format("expected packed, spread or random, got \"{}\"", p));
            }
            try {
                job.gpus = place_job(s.cluster, used, static_cast<std::uint32_t>(count), placement, seed, job.name);
            } catch (const engine::InputError& error) {
                gpus.fail(error.message());
            }
        }
        std::vector<std::string> job_defaults;
        job.graph =
            read_workload(e.require("workload"), path, s.cluster, job.gpus.size(), job.description, job_defaults);
        traces::validate(job.graph);
        if (job.graph.rank_count != job.gpus.size())
            e.require("workload")
                .fail(fmt::format("the workload has {} ranks but the job has {} GPUs", job.graph.rank_count,
                                  job.gpus.size()));
        for (const std::string& d : job_defaults) defaults.push_back(fmt::format("jobs[{}].{}", k, d));
        jobs.push_back(std::move(job));
    }
    s.graph = merge_jobs(jobs, s.jobs, s.options.rank_to_gpu, s.options.rank_start);
    for (const Job& job : jobs)
        s.workload_description +=
            fmt::format("{}{}: {}", s.workload_description.empty() ? "" : "; ", job.name, job.description);
}

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
    const engine::PhaseTimer timer("sim", "plan (topology, workload and its checks)");
    engine::YamlValue doc = engine::YamlValue::load_file(path);
    for (const auto& o : overrides) doc.apply_override(o);
    doc.expect_only_keys({"name", "description", "topology", "workload", "jobs", "system", "outputs"});
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
    // What the plan's errors point at: the workload, or the jobs.
    const engine::YamlValue plan = doc.find("jobs") ? doc.require("jobs") : doc.require("workload");
    if (auto jobs = doc.find("jobs")) {
        if (doc.find("workload")) jobs->fail("give a workload or jobs, not both");
        if (auto system = doc.find("system"); system && system->find("rank_to_gpu"))
            system->require("rank_to_gpu").fail("jobs place their ranks by their gpus and placement");
        read_jobs(*jobs, doc, path, s, workload_defaults);
    } else {
        s.graph = read_workload(doc.require("workload"), path, s.cluster, s.cluster.gpus().size(),
                                s.workload_description, workload_defaults);
    }
    traces::validate(s.graph);
    if (s.graph.job_size() > s.cluster.gpus().size())
        plan.fail(fmt::format("the workload has {} ranks but the topology '{}' has {} GPUs", s.graph.job_size(),
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
    // Federated rounds with a deadline: a probe run with every client finds the late ones, and the plan is built
    // again without their updates.
    if (s.graph.training.round_deadline_s >= 0 && !doc.find("jobs")) {
        const LateClients probe = late_clients(s.graph, s.cluster, s.options);
        if (!probe.late.empty()) {
            doc.apply_override(fmt::format("workload.dropped_clients=\"{}\"", probe.late));
            std::vector<std::string> unused;
            s.graph = read_workload(doc.require("workload"), path, s.cluster, s.cluster.gpus().size(),
                                    s.workload_description, unused);
            traces::validate(s.graph);
        }
        s.graph.derived.push_back(fmt::format(
            "dropped clients: {} (a probe run with every client: round work median {}, slowest {})",
            probe.late.empty() ? "none" : probe.late, engine::format_time(engine::from_seconds(probe.median_s)),
            engine::format_time(engine::from_seconds(probe.slowest_s))));
    }
    // Memory before simulating: a plan that does not fit is refused with the worst rank's breakdown.
    s.memory = memory_peaks(s.graph, s.cluster, s.options.rank_to_gpu);
    if (const traces::RankMemory* worst = worst_overflow(s.memory)) {
        const std::string message =
            fmt::format("the plan does not fit in GPU memory: {} (set system.memory_check: warn to run it anyway)",
                        describe_memory(*worst));
        if (s.memory_check == MemoryCheck::error) plan.fail(message);
        engine::layer_log("sim").warn("{}: {}", path, message);
    }
    apply_iterations(s);
    if (auto outputs = doc.find("outputs")) {
        outputs->expect_only_keys({"perfetto", "link_counters", "report", "timeline_ops"});
        if (auto v = outputs->find("perfetto")) s.outputs.perfetto = v->as_bool();
        if (auto v = outputs->find("report")) s.outputs.report = v->as_bool();
        if (auto v = outputs->find("link_counters"))
            s.outputs.link_counters = static_cast<std::size_t>(std::max<std::int64_t>(0, v->as_int()));
        if (auto v = outputs->find("timeline_ops")) {
            const std::int64_t ops = v->as_int();
            if (ops < 0) v->fail(fmt::format("expected 0 (every rank) or a number of ops, not {}", ops));
            s.outputs.timeline_ops = static_cast<std::uint64_t>(ops);
        }
    }
    // The links whose rate over time the outputs draw: Perfetto's counter tracks and the report's heatmap.
    s.options.link_series = std::max(s.outputs.link_counters, traces::report::ReportOptions{}.heatmap_links);
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
    log.debug("{}: replaying {} ranks, {} ops ({} dependencies besides stream order), {} communicators", scenario.name,
              scenario.graph.rank_count, scenario.graph.ops.size(), scenario.graph.op_deps.ids().size(),
              scenario.graph.comms.size());
    {
        const engine::PhaseTimer timer("sim", "replay");
        r.replay = replay(scenario.graph, scenario.cluster, scenario.options);
    }
    if (log.should_log(spdlog::level::debug)) {
        // -v: one line per collective call, in creation order, up to max_logged_calls (a 1,024-GPU GPT-3 iteration
        // unfolded has 1.2 M calls); -vv: every one.
        const auto& calls = r.replay.collectives;
        const std::size_t shown =
            log.should_log(spdlog::level::trace) ? calls.size() : std::min(calls.size(), max_logged_calls);
        for (std::size_t k = 0; k < shown; ++k) {
            const CollectiveRecord& c = calls[k];
            log.debug("collective on '{}': {}/{}, members arrived {} .. {}, done {} (NCCL's model {:.1f} us)",
                      scenario.graph.comms[c.comm.index()].name, collective_algorithms()[c.algorithm].name,
                      c.modelled_protocol ? nccl_protocol_name(c.protocol) : "-", engine::format_time(c.first_arrival),
                      engine::format_time(c.last_arrival), engine::format_time(c.end), c.nccl_predicted_us);
        }
        if (shown < calls.size())
            log.debug("... and {} more collective calls (-vv lists every one)", calls.size() - shown);
    }
    log.debug("{}: {} events, {} flows, makespan {}", scenario.name, r.replay.events, r.replay.flows,
              engine::format_time(r.replay.timeline.makespan));
    const engine::PhaseTimer timer("sim", "analysis (summary, critical path, samples)");
    const unsigned cores = threads ? threads : std::max(1U, std::thread::hardware_concurrency());
    r.summary = summarize_run(scenario.graph, r.replay.timeline, cores);
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
    r.summary.cross_site_bytes = r.replay.wan_bytes;
    r.summary.cross_site_busy = r.replay.wan_busy;
    r.summary.stages = stage_reports(scenario.graph, r.summary.ranks, scenario.cluster, scenario.options.rank_to_gpu);
    if (!scenario.jobs.empty())
        job_reports(scenario.jobs, scenario.graph, r.replay.timeline, scenario.cluster, scenario.options, r.summary);
    if (scenario.graph.iteration_count() > 1)
        r.summary.iteration_ends = traces::iteration_ends(scenario.graph, r.replay.timeline);
    if (scenario.repetition.samples > 1) {
        if (!scenario.options.variability.jitter.active())
            log.warn("{}: {} samples without jitter are all the same run (add system.jitter)", scenario.name,
                     scenario.repetition.samples);
        r.summary.samples =
            run_samples(scenario.graph, scenario.cluster, scenario.options, scenario.repetition.samples,
                        sample_facts(scenario.graph, r.replay.timeline, r.summary.critical_path), cores);
    }
    return r;
}

void prepare_output_dir(const std::string& dir) {
    engine::create_folder(dir);
    const std::filesystem::path probe = std::filesystem::path(dir) / ".clustersim-write-check";
    {
        std::ofstream out(probe);
        if (!out) throw engine::InputError(engine::SourceLocation{dir}, "cannot write into the output folder");
    }
    std::error_code ec;
    std::filesystem::remove(probe, ec);
}

traces::TimelineRanks write_outputs(const Scenario& scenario, const RunResult& result, const std::string& dir) {
    const engine::PhaseTimer timer("sim", "outputs");
    engine::create_folder(dir);
    const std::filesystem::path out(dir);
    traces::TimelineRanks shown;
    if (scenario.outputs.perfetto) {
        traces::PerfettoOptions options;
        shown = traces::timeline_ranks(scenario.graph, result.summary.critical_path, scenario.outputs.timeline_ops);
        if (!shown.all(scenario.graph)) options.ranks_shown = shown.shown;
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
        engine::AtomicFile timeline(out / "timeline.json");
        traces::write_perfetto_json(timeline.stream(), scenario.graph, result.replay.timeline, options);
        timeline.commit();
    } else {
        std::error_code ec;
        std::filesystem::remove(out / "timeline.json", ec);  // a run owns its folder: no stale timeline beside it
    }
    engine::write_file_atomically(out / "summary.json", traces::summary_json(result.summary, scenario.graph));
    engine::write_file_atomically(out / "ranks.csv", traces::ranks_csv(result.summary));
    if (!scenario.resolved_yaml.empty()) engine::write_file_atomically(out / "resolved.yaml", scenario.resolved_yaml);
    if (scenario.outputs.report) write_report(scenario, result, dir);
    return shown;
}

std::string timeline_note(const Scenario& scenario, const traces::TimelineRanks& shown) {
    if (!scenario.outputs.perfetto || shown.all(scenario.graph)) return "";
    return fmt::format(
        "timeline.json shows {} of {} ranks, {} of {} ops: the critical path's ranks first (every rank: "
        "outputs.timeline_ops 0, or replay --timeline-ops 0; a larger timeline does not open in the Perfetto UI)",
        shown.ranks_shown, scenario.graph.rank_count, shown.ops_shown, scenario.graph.ops.size());
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
