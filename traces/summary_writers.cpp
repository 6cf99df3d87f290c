// Summary output formats. Times in JSON and CSV are microseconds with six decimals (exact picoseconds).
#include "traces/summary_writers.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/units.h"
#include "traces/json_text.h"
#include "traces/perfetto_writer.h"

namespace clustersim::traces {

namespace {
using engine::Time;

struct Field {
    const char* name;
    Time RankBreakdown::*member;
};
constexpr Field rank_fields[] = {
    {"iteration", &RankBreakdown::iteration},
    {"compute", &RankBreakdown::compute},
    {"communication", &RankBreakdown::communication},
    {"overlap", &RankBreakdown::overlap},
    {"exposed_communication", &RankBreakdown::exposed_communication},
    {"network_wait", &RankBreakdown::network_wait},
    {"peer_wait", &RankBreakdown::peer_wait},
    {"dependency_wait", &RankBreakdown::dependency_wait},
    {"finished_early", &RankBreakdown::finished_early},
    {"idle_other", &RankBreakdown::idle_other},
};

double percent(Time part, Time whole) {
    return whole > Time{0} ? 100.0 * static_cast<double>(part.count()) / static_cast<double>(whole.count()) : 0.0;
}

// What only some runs have: cross-site traffic, pipeline stages, jobs, cluster events, several iterations, seeded
// samples (nothing when the run has none of them).
std::string optional_sections_json(const RunSummary& s) {
    std::string out;
    if (s.cross_site_bytes > 0)
        out += fmt::format("  \"cross_site\": {{\"wan_bytes\": {}, \"wan_busy_us\": {}}},\n",
                           json_number(s.cross_site_bytes), microseconds_text(s.cross_site_busy));
    if (!s.stages.empty()) {
        out += "  \"pipeline_stages\": [";
        for (std::size_t k = 0; k < s.stages.size(); ++k)
            out += fmt::format("{}{{\"stage\": {}, \"ranks\": {}, \"gpus\": {}, \"compute_us\": {}}}", k ? ", " : "",
                               s.stages[k].stage, s.stages[k].ranks, json_string(s.stages[k].gpus),
                               microseconds_text(s.stages[k].compute));
        out += "],\n";
    }
    if (!s.jobs.empty()) {
        out += "  \"jobs\": [";
        for (std::size_t k = 0; k < s.jobs.size(); ++k) {
            const JobReport& j = s.jobs[k];
            out += fmt::format(
                "{}\n    {{\"name\": {}, \"workload\": {}, \"gpus\": {}, \"start_us\": {}, "
                "\"together_us\": {}, \"alone_us\": {}}}",
                k ? "," : "", json_string(j.name), json_string(j.workload), j.gpus, microseconds_text(j.start),
                microseconds_text(j.together), microseconds_text(j.alone));
        }
        out += "\n  ],\n  \"interference_links\": [";
        for (std::size_t k = 0; k < s.interference.size(); ++k)
            out += fmt::format(
                "{}\n    {{\"link\": {}, \"contention_delay_together_us\": {}, "
                "\"contention_delay_alone_us\": {}}}",
                k ? "," : "", json_string(s.interference[k].link), json_number(s.interference[k].together_s * 1e6),
                json_number(s.interference[k].alone_s * 1e6));
        out += "\n  ],\n";
    }
    if (!s.cluster_events.empty()) {
        out += "  \"cluster_events\": [";
        for (std::size_t k = 0; k < s.cluster_events.size(); ++k)
            out += fmt::format("{}{{\"at_us\": {}, \"event\": {}}}", k ? ", " : "",
                               microseconds_text(s.cluster_events[k].at), json_string(s.cluster_events[k].label));
        out += "],\n";
    }
    if (!s.iteration_ends.empty()) {
        std::string ends, times;
        for (std::size_t k = 0; k < s.iteration_ends.size(); ++k) {
            ends += fmt::format("{}{}", k ? ", " : "", microseconds_text(s.iteration_ends[k]));
            times += fmt::format("{}{}", k ? ", " : "",
                                 microseconds_text(s.iteration_ends[k] - (k ? s.iteration_ends[k - 1] : Time{0})));
        }
        out += fmt::format("  \"iterations\": {{\"count\": {}, \"ends_us\": [{}], \"times_us\": [{}]}},\n",
                           s.iteration_ends.size(), ends, times);
    }
    const SampleStats& k = s.samples;
    if (k.samples > 0) {
        out += fmt::format(
            "  \"samples\": {{\"count\": {}, \"first_seed\": {}, \"iteration_time_us\": {{\"p50\": {}, \"p90\": {}, "
            "\"p99\": {}, \"max\": {}, \"mean\": {}}}, \"critical_ranks\": [",
            k.samples, k.first_seed, microseconds_text(k.p50), microseconds_text(k.p90), microseconds_text(k.p99),
            microseconds_text(k.max), microseconds_text(k.mean));
        for (std::size_t r = 0; r < k.critical_ranks.size(); ++r)
            out += fmt::format("{}{{\"rank\": {}, \"samples\": {}, \"share\": {}}}", r ? ", " : "",
                               k.critical_ranks[r].rank, k.critical_ranks[r].samples,
                               json_number(k.critical_ranks[r].share));
        out += "]},\n";
    }
    return out;
}

std::string optional_sections_text(const RunSummary& s) {
    std::string out;
    if (s.cross_site_bytes > 0)
        out += fmt::format("cross-site {} over WAN links, which carried traffic for {} ({:.1f}% of the run)\n",
                           engine::format_bytes(s.cross_site_bytes), engine::format_time(s.cross_site_busy),
                           percent(s.cross_site_busy, s.makespan));
    if (!s.stages.empty()) {
        std::size_t slowest = 0;
        for (std::size_t k = 0; k < s.stages.size(); ++k)
            if (s.stages[k].compute > s.stages[slowest].compute) slowest = k;
        std::string stages;
        for (const StageReport& st : s.stages)
            stages += fmt::format("{}{} {} ({})", stages.empty() ? "" : ", ", st.stage, engine::format_time(st.compute),
                                  st.gpus);
        out += fmt::format("stages     compute of the busiest rank: {}; slowest: stage {}\n", stages, slowest);
    }
    for (std::size_t k = 0; k < s.jobs.size(); ++k) {
        const JobReport& j = s.jobs[k];
        const double change =
            j.alone > Time{0}
                ? 100.0 * (static_cast<double>(j.together.count()) / static_cast<double>(j.alone.count()) - 1)
                : 0.0;
        out += fmt::format("{} {}: {} GPUs from {}: {} together, {} alone ({:+.1f}%)\n",
                           k ? "          " : "jobs      ", j.name, j.gpus, engine::format_time(j.start),
                           engine::format_time(j.together), engine::format_time(j.alone), change);
    }
    if (!s.interference.empty()) {
        std::string links;
        for (std::size_t k = 0; k < std::min<std::size_t>(s.interference.size(), 4); ++k)
            links += fmt::format(
                "{}{} +{}", k ? ", " : "", s.interference[k].link,
                engine::format_time(engine::from_seconds(s.interference[k].together_s - s.interference[k].alone_s)));
        out += fmt::format("interfere  on {} (contention delay beyond the jobs' alone)\n", links);
    }
    if (!s.cluster_events.empty()) {
        std::string events;
        for (const TimelineMarker& m : s.cluster_events)
            events += fmt::format("{}{}: {}", events.empty() ? "" : "; ", engine::format_time(m.at), m.label);
        out += fmt::format("events     {}\n", events);
    }
    if (!s.iteration_ends.empty()) {
        std::string times;
        const std::size_t shown = std::min<std::size_t>(s.iteration_ends.size(), 8);
        for (std::size_t k = 0; k < shown; ++k)
            times += fmt::format("{}{}", k ? ", " : "",
                                 engine::format_time(s.iteration_ends[k] - (k ? s.iteration_ends[k - 1] : Time{0})));
        if (shown < s.iteration_ends.size()) times += ", ...";
        out += fmt::format("iterations {}: {} (mean {})\n", s.iteration_ends.size(), times,
                           engine::format_time(mean_iteration(s)));
    }
    const SampleStats& k = s.samples;
    if (k.samples > 0) {
        out += fmt::format("samples    {} (seeds {}..{}): iteration p50 {}, p90 {}, p99 {}, max {}, mean {}\n",
                           k.samples, k.first_seed, k.first_seed + k.samples - 1, engine::format_time(k.p50),
                           engine::format_time(k.p90), engine::format_time(k.p99), engine::format_time(k.max),
                           engine::format_time(k.mean));
        std::string ranks;
        for (std::size_t r = 0; r < std::min<std::size_t>(k.critical_ranks.size(), 6); ++r)
            ranks += fmt::format("{}rank {} in {}/{} ({:.0f}% of the path)", r ? ", " : "", k.critical_ranks[r].rank,
                                 k.critical_ranks[r].samples, k.samples, 100 * k.critical_ranks[r].share);
        if (!ranks.empty()) out += fmt::format("           critical path through {}\n", ranks);
    }
    return out;
}
}  // namespace

std::string summary_json(const RunSummary& s, const OpGraph& g) {
    std::string out = "{\n";
    out += fmt::format("  \"scenario\": {},\n  \"topology\": {},\n  \"workload\": {},\n", json_string(s.scenario),
                       json_string(s.topology), json_string(s.workload));
    out += fmt::format(
        "  \"makespan_us\": {},\n  \"ranks\": {},\n  \"ops\": {},\n  \"events\": {},\n  \"flows\": {},\n  "
        "\"bytes_on_network\": {},\n",
        microseconds_text(s.makespan), s.ranks.size(), s.ops, s.events, s.flows, s.bytes_on_network);
    // Symmetry reduction: the job's size beside the simulated ranks.
    if (!g.job_ranks.empty()) out += fmt::format("  \"job_ranks\": {},\n", g.job_size());
    out += "  \"per_rank_us\": [";
    for (std::size_t r = 0; r < s.ranks.size(); ++r) {
        out += fmt::format("{}\n    {{\"rank\": {}", r ? "," : "", s.ranks[r].rank);
        for (const Field& f : rank_fields)
            out += fmt::format(", \"{}\": {}", f.name, microseconds_text(s.ranks[r].*f.member));
        out += "}";
    }
    out += "\n  ],\n";
    if (s.training.gpus > 0) {
        const TrainingMetrics& t = s.training;
        // Inference runs add their latencies.
        const std::string latency =
            t.time_to_first_token_s > 0
                ? fmt::format(", \"time_to_first_token_us\": {}, \"time_per_output_token_us\": {}",
                              json_number(t.time_to_first_token_s * 1e6), json_number(t.time_per_output_token_s * 1e6))
                : std::string{};
        out += fmt::format(
            "  \"training\": {{\"model_flops_per_iteration\": {}, \"hardware_flops_per_iteration\": {}, "
            "\"tflops_per_gpu\": {}, \"hardware_tflops_per_gpu\": {}, \"mfu\": {}, \"tokens_per_second\": {}, "
            "\"gpus\": {}{}}},\n",
            json_number(t.model_flops_per_iteration), json_number(t.hardware_flops_per_iteration),
            json_number(t.tflops_per_gpu), json_number(t.hardware_tflops_per_gpu), json_number(t.mfu),
            json_number(t.tokens_per_second), t.gpus, latency);
    }
    out += optional_sections_json(s);
    if (!s.memory.empty()) {
        out += "  \"peak_memory\": [";
        for (std::size_t k = 0; k < s.memory.size(); ++k) {
            const RankMemory& m = s.memory[k];
            out += fmt::format("{}\n    {{\"rank\": {}, \"peak_bytes\": {}, \"hbm_bytes\": {}", k ? "," : "", m.rank,
                               json_number(m.peak_bytes), json_number(m.hbm_bytes));
            for (std::size_t u = 0; u < memory_use_count; ++u)
                out +=
                    fmt::format(", \"{}\": {}", memory_use_name(static_cast<MemoryUse>(u)), json_number(m.at_peak[u]));
            out += "}";
        }
        out += "\n  ],\n";
    }
    out += "  \"most_contended_links\": [";
    for (std::size_t k = 0; k < s.top_links.size(); ++k) {
        const LinkReport& l = s.top_links[k];
        out += fmt::format(
            "{}\n    {{\"link\": {}, \"capacity_GBps\": {}, \"bytes\": {}, \"mean_utilization\": {}, "
            "\"peak_utilization\": {}, "
            "\"contention_delay_us\": {}}}",
            k ? "," : "", json_string(l.name), json_number(l.capacity_bytes_per_s / 1e9), json_number(l.bytes),
            json_number(l.mean_utilization), json_number(l.peak_utilization), json_number(l.contention_delay_s * 1e6));
    }
    out += "\n  ],\n  \"communication_by_group\": [";
    for (std::size_t k = 0; k < s.communication.size(); ++k) {
        const GroupCommunication& c = s.communication[k];
        out += fmt::format(
            "{}\n    {{\"group\": {}, \"ops\": {}, \"bytes\": {}, \"waiting_us\": {}, \"transferring_us\": {}}}",
            k ? "," : "", json_string(c.group), c.ops, c.bytes, microseconds_text(c.waiting),
            microseconds_text(c.transferring));
    }
    const CriticalPath& cp = s.critical_path;
    out += fmt::format(
        "\n  ],\n  \"critical_path\": {{\"compute_us\": {}, \"communication_us\": {}, \"copies_us\": {}, "
        "\"waiting_us\": {}, \"ops\": [",
        microseconds_text(cp.compute), microseconds_text(cp.communication), microseconds_text(cp.copies),
        microseconds_text(cp.waiting));
    for (std::size_t k = 0; k < cp.steps.size(); ++k) {
        const Op& op = g.ops[cp.steps[k].op.index()];
        out += fmt::format(
            "{}\n    {{\"op\": {}, \"rank\": {}, \"name\": {}, \"kind\": \"{}\", \"start_us\": {}, \"end_us\": {}}}",
            k ? "," : "", cp.steps[k].op.value, g.job_rank(g.rank_of(op)), json_string(g.names[op.name]),
            op_kind_name(op.kind), microseconds_text(cp.steps[k].start), microseconds_text(cp.steps[k].end));
    }
    out += "\n  ]}\n}\n";
    return out;
}

std::string ranks_csv(const RunSummary& s) {
    std::string out = "rank";
    for (const Field& f : rank_fields) out += fmt::format(",{}_us", f.name);
    out += "\n";
    for (const RankBreakdown& r : s.ranks) {
        out += fmt::format("{}", r.rank);
        for (const Field& f : rank_fields) out += "," + microseconds_text(r.*f.member);
        out += "\n";
    }
    return out;
}

std::string summary_table(const RunSummary& s, const OpGraph& g) {
    std::string out = fmt::format("scenario   {}\ntopology   {}\nworkload   {}\n", s.scenario, s.topology, s.workload);
    const std::string ranks = g.job_ranks.empty()
                                  ? fmt::format("{} ranks", s.ranks.size())
                                  : fmt::format("{} of {} ranks simulated", s.ranks.size(), g.job_size());
    // Several iterations: the line gives the whole run, and the next one each iteration.
    out += fmt::format("{}  {}   ({}, {} ops, {} flows, {} on the network, {} events)\n",
                       s.iteration_ends.empty() ? "iteration" : "run      ", engine::format_time(s.makespan), ranks,
                       s.ops, s.flows, engine::format_bytes(static_cast<double>(s.bytes_on_network)), s.events);
    if (s.training.gpus > 0) {
        const TrainingMetrics& t = s.training;
        out += fmt::format("throughput {:.1f} TFLOP/s per GPU (model; {:.1f} hardware), MFU {:.1f}%{}\n",
                           t.tflops_per_gpu, t.hardware_tflops_per_gpu, 100 * t.mfu,
                           t.tokens_per_second > 0 ? fmt::format(", {:.0f} tokens/s", t.tokens_per_second) : "");
        if (t.time_to_first_token_s > 0)
            out += fmt::format("latency    first token {}, then {} per output token\n",
                               engine::format_time(engine::from_seconds(t.time_to_first_token_s)),
                               engine::format_time(engine::from_seconds(t.time_per_output_token_s)));
    }
    out += optional_sections_text(s);
    if (!s.memory.empty()) {
        const RankMemory* top = &s.memory.front();
        for (const RankMemory& m : s.memory)
            if (m.peak_bytes > top->peak_bytes) top = &m;
        std::string parts;
        for (std::size_t u = 0; u < memory_use_count; ++u)
            if (top->at_peak[u] > 0)
                parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", memory_use_name(static_cast<MemoryUse>(u)),
                                     engine::format_bytes(top->at_peak[u]));
        out += fmt::format("memory     peak {} of {} HBM on rank {} ({})\n", engine::format_bytes(top->peak_bytes),
                           engine::format_bytes(top->hbm_bytes), top->rank, parts);
    }
    out += "\n";
    out += fmt::format("{:>11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "rank", "compute%", "comm%",
                       "overlap%", "exposed%", "network%", "peer%", "bubble%", "early%", "other%");
    // Ranks with the same breakdown (to the printed digits) share a row, in order of their first rank.
    std::vector<std::pair<std::string, std::vector<std::uint32_t>>> rows;
    for (const RankBreakdown& r : s.ranks) {
        const std::string row = fmt::format(
            " {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f}\n",
            percent(r.compute, r.iteration), percent(r.communication, r.iteration), percent(r.overlap, r.iteration),
            percent(r.exposed_communication, r.iteration), percent(r.network_wait, r.iteration),
            percent(r.peer_wait, r.iteration), percent(r.dependency_wait, r.iteration),
            percent(r.finished_early, r.iteration), percent(r.idle_other, r.iteration));
        auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& x) { return x.first == row; });
        if (s.ranks.size() <= 32 || it == rows.end())
            rows.emplace_back(row, std::vector<std::uint32_t>{r.rank});
        else
            it->second.push_back(r.rank);
    }
    const std::size_t shown = std::min<std::size_t>(rows.size(), 40);
    for (std::size_t k = 0; k < shown; ++k) {
        const auto& ranks_of_row = rows[k].second;
        const std::string label = ranks_of_row.size() == 1
                                      ? fmt::format("{}", ranks_of_row.front())
                                      : fmt::format("{} (x{})", ranks_of_row.front(), ranks_of_row.size());
        out += fmt::format("{:>11}{}", label, rows[k].first);
    }
    if (shown < rows.size()) out += fmt::format("{:>11} ... {} more rows\n", "", rows.size() - shown);
    if (!s.top_links.empty()) {
        out += "\nmost contended links (contention delay attributed, bytes, mean / peak utilization):\n";
        for (const LinkReport& l : s.top_links)
            out += fmt::format("  {:<40} {:>12}  {:>12}  {:5.1f}% / {:5.1f}%\n", l.name,
                               engine::format_time(engine::from_seconds(l.contention_delay_s)),
                               engine::format_bytes(l.bytes), 100 * l.mean_utilization, 100 * l.peak_utilization);
    }
    const CriticalPath& cp = s.critical_path;
    out += fmt::format("\ncritical path: {} ops; compute {}, communication {}, copies {}, waiting {}\n",
                       cp.steps.size(), engine::format_time(cp.compute), engine::format_time(cp.communication),
                       engine::format_time(cp.copies), engine::format_time(cp.waiting));
    if (!s.communication.empty()) {
        out += fmt::format(
            "\ncommunication by group (per simulated rank: ops, bytes, waiting for peers, transferring; times sum over "
            "the rank's streams, so they can exceed the iteration when several streams wait at once):\n");
        const auto rank_count = static_cast<std::int64_t>(std::max<std::size_t>(1, s.ranks.size()));
        for (const GroupCommunication& c : s.communication)
            out += fmt::format("  {:<12} {:>9.1f} {:>12} {:>14} {:>14}\n", c.group,
                               static_cast<double>(c.ops) / static_cast<double>(rank_count),
                               engine::format_bytes(static_cast<double>(c.bytes) / static_cast<double>(rank_count)),
                               engine::format_time(engine::Time{c.waiting.count() / rank_count}),
                               engine::format_time(engine::Time{c.transferring.count() / rank_count}));
    }
    return out;
}

}  // namespace clustersim::traces
