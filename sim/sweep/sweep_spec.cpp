#include "sim/sweep/sweep_spec.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "engine/yaml_reader.h"

namespace clustersim::sim {

const std::vector<std::string>& sweep_metric_names() {
    static const std::vector<std::string> names = {"iteration_us",
                                                   "tflops_per_gpu",
                                                   "hardware_tflops_per_gpu",
                                                   "mfu",
                                                   "tokens_per_second",
                                                   "gpus",
                                                   "peak_memory",
                                                   "exposed_comm_fraction",
                                                   "network_wait_fraction",
                                                   "peer_wait_fraction",
                                                   "bubble_fraction"};
    return names;
}

std::vector<std::string> SweepSpec::keys() const {
    std::vector<std::string> out;
    for (const SweepDimension& d : dimensions) out.insert(out.end(), d.keys.begin(), d.keys.end());
    return out;
}

namespace {

std::uint64_t fnv1a(std::uint64_t h, const std::string& text) {
    for (const unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
    return h;
}

std::string file_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<std::string> scalar_values(const engine::YamlValue& list, const std::string& key) {
    if (!list.is_sequence()) list.fail(fmt::format("axis '{}': expected a list of values", key));
    std::vector<std::string> out;
    for (const engine::YamlValue& v : list.elements()) {
        if (!v.is_scalar()) v.fail(fmt::format("axis '{}': expected a single value (a number or text)", key));
        out.push_back(v.as_string());
    }
    if (out.empty()) list.fail(fmt::format("axis '{}' has no values", key));
    return out;
}

}  // namespace

SweepSpec load_sweep(const std::string& path) {
    const engine::YamlValue doc = engine::YamlValue::load_file(path);
    doc.expect_only_keys({"base", "axes", "zip", "filter", "metrics"});
    SweepSpec spec;
    spec.file = path;
    const engine::YamlValue base = doc.require("base");
    std::filesystem::path base_path(base.as_string());
    if (base_path.is_relative()) base_path = std::filesystem::path(path).parent_path() / base_path;
    spec.base = base_path.lexically_normal().string();
    std::error_code ec;  // a name too long or unreadable is the same input error as a missing file
    if (!std::filesystem::is_regular_file(spec.base, ec))
        base.fail(fmt::format("the base scenario '{}' is not a file", spec.base.substr(0, 300)));
    std::vector<std::string> seen;
    auto add_key = [&](const engine::YamlValue& where, const std::string& key) {
        if (std::find(seen.begin(), seen.end(), key) != seen.end())
            where.fail(fmt::format("axis '{}' given twice", key));
        seen.push_back(key);
    };
    if (const auto axes = doc.find("axes")) {
        if (!axes->is_map()) axes->fail("expected a map of axis keys to lists of values");
        for (const std::string& key : axes->keys()) {
            add_key(*axes, key);
            SweepDimension d;
            d.keys = {key};
            for (const std::string& v : scalar_values(axes->require(key), key)) d.values.push_back({v});
            spec.dimensions.push_back(std::move(d));
        }
    }
    if (const auto zip = doc.find("zip")) {
        if (!zip->is_sequence()) zip->fail("expected a list of groups of axes that vary together");
        for (const engine::YamlValue& group : zip->elements()) {
            if (!group.is_map()) group.fail("expected a map of axis keys to lists of values of one length");
            SweepDimension d;
            std::vector<std::vector<std::string>> columns;
            for (const std::string& key : group.keys()) {
                add_key(group, key);
                d.keys.push_back(key);
                columns.push_back(scalar_values(group.require(key), key));
                if (columns.back().size() != columns.front().size())
                    group.require(key).fail(fmt::format("zip: axis '{}' has {} values, '{}' has {}", key,
                                                        columns.back().size(), d.keys.front(), columns.front().size()));
            }
            if (d.keys.empty()) group.fail("an empty zip group");
            for (std::size_t i = 0; i < columns.front().size(); ++i) {
                std::vector<std::string> setting;
                for (const auto& column : columns) setting.push_back(column[i]);
                d.values.push_back(std::move(setting));
            }
            spec.dimensions.push_back(std::move(d));
        }
    }
    if (spec.dimensions.empty()) doc.fail("the sweep has no axes (give axes: or zip:)");
    double points = 1;
    for (const SweepDimension& d : spec.dimensions) points *= static_cast<double>(d.values.size());
    if (points > 1e7) doc.fail(fmt::format("the grid has {:.3g} points, more than 10 million", points));
    if (const auto filter = doc.find("filter"))
        spec.filter.emplace(filter->as_string(), spec.keys(), filter->location());
    if (const auto metrics = doc.find("metrics")) {
        for (const engine::YamlValue& m : metrics->elements()) {
            const std::string name = m.as_string();
            const auto& known = sweep_metric_names();
            if (std::find(known.begin(), known.end(), name) == known.end())
                m.fail(fmt::format("unknown metric '{}' (known: {})", name, fmt::join(known, ", ")));
            spec.metrics.push_back(name);
        }
    } else {
        spec.metrics = {"iteration_us", "tflops_per_gpu", "mfu", "peak_memory", "exposed_comm_fraction"};
    }
    spec.hash = fnv1a(fnv1a(14695981039346656037ULL, file_text(path)), file_text(spec.base));
    return spec;
}

void check_sweep_values(const SweepSpec& spec, const std::function<void(const std::string&)>& load_with) {
    // Each value alone on the base: a complaint about the override itself (an unknown key, a value of the wrong
    // type) is the sweep file's error; any other is the point's (recorded when it runs).
    for (const SweepDimension& d : spec.dimensions) {
        for (std::size_t k = 0; k < d.keys.size(); ++k) {
            for (const auto& setting : d.values) {
                try {
                    load_with(d.keys[k] + "=" + setting[k]);
                } catch (const engine::InputError& e) {
                    if (e.where().file != "--set") continue;
                    throw engine::InputError(engine::SourceLocation{spec.file, 0, 0, d.keys[k]},
                                             fmt::format("value {}: {}", setting[k], e.message()));
                }
            }
        }
    }
}

std::vector<std::pair<std::uint64_t, SweepPoint>> sweep_points(const SweepSpec& spec) {
    std::uint64_t total = 1;
    for (const SweepDimension& d : spec.dimensions) total *= d.values.size();
    std::vector<std::pair<std::uint64_t, SweepPoint>> out;
    for (std::uint64_t index = 0; index < total; ++index) {
        // Mixed radix, the last dimension fastest.
        SweepPoint point;
        std::uint64_t rest = index;
        std::vector<std::size_t> digit(spec.dimensions.size());
        for (std::size_t k = spec.dimensions.size(); k-- > 0;) {
            digit[k] = rest % spec.dimensions[k].values.size();
            rest /= spec.dimensions[k].values.size();
        }
        for (std::size_t k = 0; k < spec.dimensions.size(); ++k) {
            const SweepDimension& d = spec.dimensions[k];
            for (std::size_t j = 0; j < d.keys.size(); ++j) point.emplace_back(d.keys[j], d.values[digit[k]][j]);
        }
        if (spec.filter && !spec.filter->accepts(point)) continue;
        out.emplace_back(index, std::move(point));
    }
    return out;
}

}  // namespace clustersim::sim
