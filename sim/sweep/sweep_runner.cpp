#include "sim/sweep/sweep_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <map>
#include <new>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/atomic_file.h"
#include "engine/error.h"
#include "sim/scenario/scenario.h"
#include "traces/json_text.h"
#include "traces/report/sweep_report.h"
#include "traces/summary_writers.h"
#include "traces/text_file.h"

namespace clustersim::sim {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string point_dir(const std::string& out, std::uint64_t index) {
    return (fs::path(out) / "points" / fmt::format("{:06}", index)).string();
}

std::vector<std::pair<std::string, double>> metrics_of(const RunResult& r, const std::vector<std::string>& names) {
    const traces::RunSummary& s = r.summary;
    auto fraction = [&](engine::Time traces::RankBreakdown::*part) {
        double sum = 0;
        for (const auto& b : s.ranks)
            sum += b.iteration.count() > 0
                       ? static_cast<double>((b.*part).count()) / static_cast<double>(b.iteration.count())
                       : 0;
        return s.ranks.empty() ? 0.0 : sum / static_cast<double>(s.ranks.size());
    };
    double peak = 0;
    for (const auto& m : s.memory) peak = std::max(peak, m.peak_bytes);
    std::vector<std::pair<std::string, double>> out;
    for (const std::string& n : names) {
        double v = 0;
        if (n == "iteration_us") v = static_cast<double>(s.makespan.count()) / 1e6;
        if (n == "tflops_per_gpu") v = s.training.tflops_per_gpu;
        if (n == "hardware_tflops_per_gpu") v = s.training.hardware_tflops_per_gpu;
        if (n == "mfu") v = s.training.mfu;
        if (n == "tokens_per_second") v = s.training.tokens_per_second;
        if (n == "gpus") v = s.training.gpus;
        if (n == "peak_memory") v = peak;
        if (n == "exposed_comm_fraction") v = fraction(&traces::RankBreakdown::exposed_communication);
        if (n == "network_wait_fraction") v = fraction(&traces::RankBreakdown::network_wait);
        if (n == "peer_wait_fraction") v = fraction(&traces::RankBreakdown::peer_wait);
        if (n == "bubble_fraction") v = fraction(&traces::RankBreakdown::dependency_wait);
        out.emplace_back(n, v);
    }
    return out;
}

}  // namespace

std::string sweep_row_json(const SweepRow& row) {
    std::string axes, metrics;
    for (const auto& [k, v] : row.point)
        axes += fmt::format("{}{}: {}", axes.empty() ? "" : ", ", traces::json_string(k), traces::json_string(v));
    for (const auto& [k, v] : row.metrics)
        metrics += fmt::format("{}{}: {}", metrics.empty() ? "" : ", ", traces::json_string(k), traces::json_number(v));
    return fmt::format(
        "{{\"index\": {}, \"axes\": {{{}}}, \"status\": \"{}\", \"error\": {}, \"metrics\": {{{}}}, "
        "\"wall_s\": {}}}\n",
        row.index, axes, row.status, traces::json_string(row.error), metrics, traces::json_number(row.wall_s));
}

SweepRow parse_sweep_row(const std::string& text, const std::string& where) {
    SweepRow row;
    try {
        const nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
        row.index = j.at("index").get<std::uint64_t>();
        for (const auto& [k, v] : j.at("axes").items()) row.point.emplace_back(k, v.get<std::string>());
        row.status = j.at("status").get<std::string>();
        row.error = j.at("error").get<std::string>();
        for (const auto& [k, v] : j.at("metrics").items()) row.metrics.emplace_back(k, v.get<double>());
        row.wall_s = j.at("wall_s").get<double>();
    } catch (const json::exception& e) {
        throw engine::InputError(engine::SourceLocation{where}, fmt::format("not a sweep row: {}", e.what()));
    }
    return row;
}

namespace {

SweepRow parse_row(const std::string& path) { return parse_sweep_row(traces::read_text_file(path), path); }

std::string csv_field(const std::string& v) {
    if (v.find_first_of(",\"\n") == std::string::npos) return v;
    std::string out = "\"";
    for (const char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

/// results.csv (no wall times: the same points give the same bytes) and results.jsonl, rows by index.
void write_results(const std::string& out, const std::vector<std::string>& keys,
                   const std::vector<std::string>& metrics, std::vector<SweepRow> rows) {
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    std::string csv = "index";
    for (const auto& k : keys) csv += "," + csv_field(k);
    csv += ",status";
    for (const auto& m : metrics) csv += "," + m;
    csv += ",error\n";
    std::string jsonl;
    for (const SweepRow& r : rows) {
        csv += fmt::format("{}", r.index);
        for (const auto& k : keys) {
            const auto it = std::find_if(r.point.begin(), r.point.end(), [&](const auto& p) { return p.first == k; });
            csv += "," + csv_field(it == r.point.end() ? "" : it->second);
        }
        csv += "," + r.status;
        for (const auto& m : metrics) {
            const auto it =
                std::find_if(r.metrics.begin(), r.metrics.end(), [&](const auto& p) { return p.first == m; });
            csv += "," + (it == r.metrics.end() || r.status != "ok" ? std::string() : traces::json_number(it->second));
        }
        csv += "," + csv_field(r.error) + "\n";
        jsonl += sweep_row_json(r);
    }
    engine::write_file_atomically(fs::path(out) / "results.csv", csv);
    engine::write_file_atomically(fs::path(out) / "results.jsonl", jsonl);
}

std::string sweep_json(const SweepSpec& spec, const std::vector<std::pair<std::uint64_t, SweepPoint>>& points) {
    std::string indices;
    for (const auto& [i, p] : points) indices += fmt::format("{}{}", indices.empty() ? "" : ", ", i);
    std::string keys, metrics;
    for (const auto& k : spec.keys()) keys += fmt::format("{}{}", keys.empty() ? "" : ", ", traces::json_string(k));
    for (const auto& m : spec.metrics)
        metrics += fmt::format("{}{}", metrics.empty() ? "" : ", ", traces::json_string(m));
    return fmt::format(
        "{{\"sweep\": {}, \"base\": {}, \"hash\": \"{:016x}\", \"keys\": [{}], \"metrics\": [{}], "
        "\"indices\": [{}]}}\n",
        traces::json_string(spec.file), traces::json_string(spec.base), spec.hash, keys, metrics, indices);
}

struct FolderInfo {
    std::string hash;
    std::vector<std::string> keys, metrics;
    std::vector<std::uint64_t> indices;
};
FolderInfo read_folder(const std::string& dir) {
    const std::string path = (fs::path(dir) / "sweep.json").string();
    if (!fs::exists(path)) throw engine::InputError(engine::SourceLocation{dir}, "not a sweep folder (no sweep.json)");
    try {
        const json j = json::parse(traces::read_text_file(path));
        return {j.at("hash").get<std::string>(), j.at("keys").get<std::vector<std::string>>(),
                j.at("metrics").get<std::vector<std::string>>(), j.at("indices").get<std::vector<std::uint64_t>>()};
    } catch (const json::exception& e) {
        throw engine::InputError(engine::SourceLocation{path},
                                 fmt::format("not a sweep folder's sweep.json: {}", e.what()));
    }
}

std::vector<SweepRow> rows_in(const std::string& dir) {
    std::vector<SweepRow> rows;
    const fs::path points = fs::path(dir) / "points";
    if (!fs::is_directory(points)) return rows;
    std::vector<fs::path> folders;
    for (const auto& e : fs::directory_iterator(points)) folders.push_back(e.path());
    std::sort(folders.begin(), folders.end());
    for (const fs::path& f : folders) {
        if (fs::exists(f / "row.json")) rows.push_back(parse_row((f / "row.json").string()));
    }
    return rows;
}

}  // namespace

PointResult compute_point(const SweepSpec& spec, std::uint64_t index, const SweepPoint& point) {
    PointResult out{SweepRow{index, point, "ok", {}, {}, 0}, {}};
    SweepRow& row = out.row;
    const auto start = std::chrono::steady_clock::now();
    try {
        std::vector<std::string> overrides;
        for (const auto& [k, v] : point) overrides.push_back(k + "=" + v);
        const Scenario scenario = load_scenario(spec.base, overrides);
        const RunResult result = run_scenario(scenario);
        row.metrics = metrics_of(result, spec.metrics);
        out.summary_json = traces::summary_json(result.summary, scenario.graph);
    } catch (const engine::InputError& e) {
        row.status = "invalid";
        row.error = e.what();
    } catch (const std::bad_alloc&) {
        row.status = "failed";
        row.error = "out of memory";
    } catch (const std::exception& e) {
        row.status = "failed";
        row.error = e.what();
    }
    row.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

void store_point(const std::string& out_dir, const PointResult& result) {
    const std::string dir = point_dir(out_dir, result.row.index);
    engine::create_folder(dir);
    if (!result.summary_json.empty())
        engine::write_file_atomically(fs::path(dir) / "summary.json", result.summary_json);
    engine::write_file_atomically(fs::path(dir) / "row.json", sweep_row_json(result.row));
}

std::vector<std::pair<std::uint64_t, SweepPoint>> prepare_sweep(const SweepSpec& spec, const SweepOptions& options,
                                                                std::vector<SweepRow>& done_rows) {
    check_sweep_values(spec, [&](const std::string& assignment) { (void)load_scenario(spec.base, {assignment}); });
    const auto points = sweep_points(spec);
    engine::create_folder(options.out_dir);
    const std::string hash = fmt::format("{:016x}", spec.hash);
    if (fs::exists(fs::path(options.out_dir) / "sweep.json") && read_folder(options.out_dir).hash != hash)
        throw engine::InputError(
            engine::SourceLocation{options.out_dir},
            fmt::format("the folder holds the points of another sweep (or of {} or its base before "
                        "they changed): give another -o folder",
                        spec.file));
    engine::write_file_atomically(fs::path(options.out_dir) / "sweep.json", sweep_json(spec, points));
    std::map<std::uint64_t, SweepRow> done;
    for (SweepRow& r : rows_in(options.out_dir)) done[r.index] = std::move(r);
    std::vector<std::pair<std::uint64_t, SweepPoint>> todo;
    for (const auto& p : points) {
        if (p.first % options.shards != options.shard) continue;
        const auto it = done.find(p.first);
        if (it != done.end() && (it->second.status == "ok" || !options.retry_failed))
            done_rows.push_back(it->second);
        else
            todo.push_back(p);
    }
    return todo;
}

void finish_sweep(const SweepSpec& spec, const SweepOptions& options, const std::vector<SweepRow>& rows) {
    write_results(options.out_dir, spec.keys(), spec.metrics, rows);
    if (!options.report) return;
    traces::report::SweepTable table{fmt::format("clustersim sweep: {}", spec.file), spec.keys(), spec.metrics, {}};
    std::vector<SweepRow> sorted = rows;
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    for (const SweepRow& r : sorted) {
        traces::report::SweepTable::Row row{r.index, {}, r.status == "ok", {}};
        for (const std::string& k : table.keys) {
            const auto it = std::find_if(r.point.begin(), r.point.end(), [&](const auto& p) { return p.first == k; });
            row.values.push_back(it == r.point.end() ? "" : it->second);
        }
        for (const std::string& m : table.metrics) {
            const auto it =
                std::find_if(r.metrics.begin(), r.metrics.end(), [&](const auto& p) { return p.first == m; });
            row.metrics.push_back(it == r.metrics.end() ? 0.0 : it->second);
        }
        table.rows.push_back(std::move(row));
    }
    engine::write_file_atomically(fs::path(options.out_dir) / "report.html", traces::report::sweep_report(table));
}

SweepOutcome run_sweep(const SweepSpec& spec, const SweepOptions& options) {
    std::vector<SweepRow> rows;
    const auto todo = prepare_sweep(spec, options, rows);
    SweepOutcome outcome;
    outcome.skipped = rows.size();
    outcome.points = rows.size() + todo.size();
    std::vector<SweepRow> ran(todo.size());
    std::atomic<std::size_t> next{0}, finished{0}, failed{0};
    // A point's failure is its row; what escapes (its files not written: a full disk) stops the sweep, and the
    // lowest such point's error is rethrown once every thread is done, whatever the threads' timing.
    std::vector<std::exception_ptr> errors(todo.size());
    std::atomic<bool> stopped{false};
    auto worker = [&] {
        for (std::size_t k = next++; k < todo.size(); k = next++) {
            try {
                const PointResult result = compute_point(spec, todo[k].first, todo[k].second);
                store_point(options.out_dir, result);
                ran[k] = result.row;
                if (ran[k].status != "ok") ++failed;
            } catch (...) {
                errors[k] = std::current_exception();
                next = todo.size();
                stopped = true;
            }
            ++finished;
        }
    };
    const unsigned threads = std::max(1U, std::min<unsigned>(options.threads, static_cast<unsigned>(todo.size())));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    if (options.progress) {
        // The calling thread reports while the others work, then joins in.
        pool.emplace_back(worker);
        while (finished < todo.size() && !stopped) {
            options.progress(options.progress_context, finished + outcome.skipped, failed, outcome.points);
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        options.progress(options.progress_context, finished + outcome.skipped, failed, outcome.points);
    } else {
        worker();
    }
    for (std::thread& t : pool) t.join();
    for (const std::exception_ptr& e : errors)
        if (e) std::rethrow_exception(e);
    outcome.ran = todo.size();
    rows.insert(rows.end(), ran.begin(), ran.end());
    for (const SweepRow& r : rows) outcome.failed += r.status != "ok";
    finish_sweep(spec, options, rows);
    return outcome;
}

std::vector<std::uint64_t> merge_sweeps(const std::vector<std::string>& dirs, const std::string& out_dir) {
    if (dirs.empty()) throw engine::InputError("sweep merge: no folders given");
    const FolderInfo first = read_folder(dirs.front());
    std::map<std::uint64_t, SweepRow> rows;
    for (const std::string& dir : dirs) {
        const FolderInfo info = read_folder(dir);
        if (info.hash != first.hash)
            throw engine::InputError(engine::SourceLocation{dir},
                                     fmt::format("a folder of another sweep than {}'s", dirs.front()));
        for (SweepRow& r : rows_in(dir)) {
            auto it = rows.find(r.index);
            if (it == rows.end() || (it->second.status != "ok" && r.status == "ok")) rows[r.index] = std::move(r);
        }
    }
    engine::create_folder(out_dir);
    std::vector<SweepRow> all;
    for (auto& [i, r] : rows) all.push_back(r);
    // The merged folder is a sweep folder too: its rows, and the sweep it came from.
    engine::write_file_atomically(fs::path(out_dir) / "sweep.json",
                                  traces::read_text_file((fs::path(dirs.front()) / "sweep.json").string()));
    for (const SweepRow& r : all) {
        engine::create_folder(point_dir(out_dir, r.index));
        engine::write_file_atomically(fs::path(point_dir(out_dir, r.index)) / "row.json", sweep_row_json(r));
    }
    write_results(out_dir, first.keys, first.metrics, all);
    std::vector<std::uint64_t> missing;
    for (const std::uint64_t i : first.indices) {
        if (!rows.count(i)) missing.push_back(i);
    }
    return missing;
}

}  // namespace clustersim::sim
