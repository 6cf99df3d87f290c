#include "traces/summary_reader.h"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/error.h"
#include "traces/text_file.h"

namespace clustersim::traces {

namespace {

using engine::Time;
using nlohmann::json;

struct Reader {
    std::string path;

    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        throw engine::InputError(engine::SourceLocation{path, 0, 0, where}, what);
    }
    const json& field(const json& object, const char* key, const std::string& where) const {
        if (!object.is_object()) fail(where, "expected an object");
        const auto it = object.find(key);
        if (it == object.end()) fail(where, fmt::format("missing \"{}\" (is this a clustersim summary.json?)", key));
        return *it;
    }
    double number(const json& object, const char* key, const std::string& where) const {
        const json& v = field(object, key, where);
        if (!v.is_number() || !std::isfinite(v.get<double>())) fail(where + "." + key, "expected a number");
        return v.get<double>();
    }
    Time microseconds(const json& object, const char* key, const std::string& where) const {
        const double us = number(object, key, where);
        if (std::abs(us) > 9e12) fail(where + "." + key, "a time beyond what a run represents");
        return Time{std::llround(us * 1e6)};  // written with six decimals: exact picoseconds
    }
    std::string text(const json& object, const char* key, const std::string& where) const {
        const json& v = field(object, key, where);
        if (!v.is_string()) fail(where + "." + key, "expected a string");
        return v.get<std::string>();
    }
    std::uint64_t count(const json& object, const char* key, const std::string& where) const {
        const double v = number(object, key, where);
        if (v < 0 || v > 1.8e19 || v != std::floor(v)) fail(where + "." + key, "expected a whole number");
        return static_cast<std::uint64_t>(v);
    }
    const json& array(const json& object, const char* key, const std::string& where) const {
        const json& v = field(object, key, where);
        if (!v.is_array()) fail(where + "." + key, "expected a list");
        return v;
    }
};

}  // namespace

RunSummary read_summary_json(const std::string& given) {
    std::string path = given;
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) path = (std::filesystem::path(path) / "summary.json").string();
    const Reader r{path};
    json doc;
    try {
        doc = json::parse(read_text_file(path));
    } catch (const json::exception& e) {
        r.fail("", fmt::format("not JSON: {}", e.what()));
    }
    RunSummary s;
    s.scenario = r.text(doc, "scenario", "");
    s.topology = r.text(doc, "topology", "");
    s.workload = r.text(doc, "workload", "");
    s.makespan = r.microseconds(doc, "makespan_us", "");
    s.ops = r.count(doc, "ops", "");
    s.events = r.count(doc, "events", "");
    s.flows = r.count(doc, "flows", "");
    s.bytes_on_network = r.count(doc, "bytes_on_network", "");
    const json& ranks = r.array(doc, "per_rank_us", "");
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const std::string where = fmt::format("per_rank_us[{}]", i);
        const json& x = ranks[i];
        RankBreakdown b;
        b.rank = static_cast<std::uint32_t>(std::min<std::uint64_t>(r.count(x, "rank", where), UINT32_MAX));
        b.iteration = r.microseconds(x, "iteration", where);
        b.compute = r.microseconds(x, "compute", where);
        b.communication = r.microseconds(x, "communication", where);
        b.overlap = r.microseconds(x, "overlap", where);
        b.exposed_communication = r.microseconds(x, "exposed_communication", where);
        b.network_wait = r.microseconds(x, "network_wait", where);
        b.peer_wait = r.microseconds(x, "peer_wait", where);
        b.dependency_wait = r.microseconds(x, "dependency_wait", where);
        b.finished_early = r.microseconds(x, "finished_early", where);
        b.idle_other = r.microseconds(x, "idle_other", where);
        s.ranks.push_back(b);
    }
    if (doc.contains("training")) {
        const json& t = doc["training"];
        s.training.model_flops_per_iteration = r.number(t, "model_flops_per_iteration", "training");
        s.training.hardware_flops_per_iteration = r.number(t, "hardware_flops_per_iteration", "training");
        s.training.tflops_per_gpu = r.number(t, "tflops_per_gpu", "training");
        s.training.hardware_tflops_per_gpu = r.number(t, "hardware_tflops_per_gpu", "training");
        s.training.mfu = r.number(t, "mfu", "training");
        s.training.tokens_per_second = r.number(t, "tokens_per_second", "training");
        if (t.contains("time_to_first_token_us")) {
            s.training.time_to_first_token_s = r.number(t, "time_to_first_token_us", "training") * 1e-6;
            s.training.time_per_output_token_s = r.number(t, "time_per_output_token_us", "training") * 1e-6;
        }
        s.training.gpus =
            static_cast<std::uint32_t>(std::min<std::uint64_t>(r.count(t, "gpus", "training"), UINT32_MAX));
    }
    if (doc.contains("peak_memory")) {
        const json& memory = r.array(doc, "peak_memory", "");
        for (std::size_t i = 0; i < memory.size(); ++i) {
            const std::string where = fmt::format("peak_memory[{}]", i);
            RankMemory m;
            m.rank = static_cast<std::uint32_t>(std::min<std::uint64_t>(r.count(memory[i], "rank", where), UINT32_MAX));
            m.peak_bytes = r.number(memory[i], "peak_bytes", where);
            m.hbm_bytes = r.number(memory[i], "hbm_bytes", where);
            for (std::size_t u = 0; u < memory_use_count; ++u)
                m.at_peak[u] = r.number(memory[i], memory_use_name(static_cast<MemoryUse>(u)), where);
            s.memory.push_back(m);
        }
    }
    const json& links = r.array(doc, "most_contended_links", "");
    for (std::size_t i = 0; i < links.size(); ++i) {
        const std::string where = fmt::format("most_contended_links[{}]", i);
        const json& x = links[i];
        s.top_links.push_back(LinkReport{r.text(x, "link", where), r.number(x, "capacity_GBps", where) * 1e9,
                                         r.number(x, "bytes", where), r.number(x, "mean_utilization", where),
                                         r.number(x, "peak_utilization", where),
                                         r.number(x, "contention_delay_us", where) * 1e-6});
    }
    const json& groups = r.array(doc, "communication_by_group", "");
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const std::string where = fmt::format("communication_by_group[{}]", i);
        const json& x = groups[i];
        s.communication.push_back(GroupCommunication{r.text(x, "group", where), r.count(x, "ops", where),
                                                     r.count(x, "bytes", where), r.microseconds(x, "waiting_us", where),
                                                     r.microseconds(x, "transferring_us", where)});
    }
    const json& cp = r.field(doc, "critical_path", "");
    s.critical_path.compute = r.microseconds(cp, "compute_us", "critical_path");
    s.critical_path.communication = r.microseconds(cp, "communication_us", "critical_path");
    s.critical_path.copies = r.microseconds(cp, "copies_us", "critical_path");
    s.critical_path.waiting = r.microseconds(cp, "waiting_us", "critical_path");
    return s;
}

}  // namespace clustersim::traces
