// Reading a scenario's `system:` block.
#include "sim/scenario/system_options.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "traces/formats/trace_import.h"

namespace clustersim::sim {

namespace {

std::uint32_t count_in(const engine::YamlValue& v, std::uint32_t most, const char* what) {
    const std::int64_t x = v.as_int();
    if (x < 1 || x > most) v.fail(fmt::format("expected {} from 1 to {}, got {}", what, most, x));
    return static_cast<std::uint32_t>(x);
}

Straggler read_straggler(const engine::YamlValue& e) {
    e.expect_only_keys({"ranks", "gpus", "slowdown", "from", "until", "iterations"});
    Straggler st;
    st.where = e.location();
    if (static_cast<bool>(e.find("ranks")) == static_cast<bool>(e.find("gpus")))
        e.fail("expected ranks or gpus (the ranks on those GPUs), one of them");
    const bool by_gpu = static_cast<bool>(e.find("gpus"));
    const engine::YamlValue ids = e.require(by_gpu ? "gpus" : "ranks");
    std::vector<std::uint32_t>& list = by_gpu ? st.gpus : st.ranks;
    for (const auto& r : ids.is_sequence() ? ids.elements() : std::vector{ids}) {
        const std::int64_t id = r.as_int();
        if (id < 0 || id > UINT32_MAX) r.fail(by_gpu ? "expected a GPU index from 0" : "expected a rank from 0");
        list.push_back(static_cast<std::uint32_t>(id));
    }
    if (list.empty()) ids.fail(by_gpu ? "expected a GPU or a list of GPUs" : "expected a rank or a list of ranks");
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    const engine::YamlValue slowdown = e.require("slowdown");
    st.slowdown = slowdown.as_double();
    if (!(st.slowdown > 0 && st.slowdown <= 1000))
        slowdown.fail("expected a factor above 0 and at most 1000 (2 means kernels take twice as long)");
    if (auto v = e.find("from")) st.from = v->as_time();
    if (auto v = e.find("until")) st.until = v->as_time();
    if (st.from < engine::Time{0}) e.require("from").fail("expected a time from 0");
    if (st.until <= st.from) e.require("until").fail("expected a time after 'from'");
    if (auto v = e.find("iterations")) {
        if (st.timed()) v->fail("give either a time window (from, until) or iterations, not both");
        const auto items = v->is_sequence() ? v->elements() : std::vector{*v};
        if (items.empty() || items.size() > 2) v->fail("expected an iteration or [first, last] (1-based)");
        st.first_iteration = count_in(items.front(), UINT32_MAX, "an iteration");
        st.last_iteration = count_in(items.back(), UINT32_MAX, "an iteration");
        if (st.last_iteration < st.first_iteration) v->fail("expected [first, last] with first <= last");
    }
    return st;
}

Jitter read_jitter(const engine::YamlValue& v) {
    v.expect_only_keys({"distribution", "sigma", "factors", "trace"});
    Jitter j;
    const engine::YamlValue d = v.require("distribution");
    const std::string name = d.as_string();
    if (name == "normal")
        j.distribution = Jitter::Distribution::normal;
    else if (name == "lognormal")
        j.distribution = Jitter::Distribution::lognormal;
    else if (name == "empirical")
        j.distribution = Jitter::Distribution::empirical;
    else if (name != "none")
        d.fail(fmt::format("expected none, normal, lognormal or empirical, got \"{}\"", name));
    if (j.distribution == Jitter::Distribution::empirical) {
        if (v.find("sigma")) v.require("sigma").fail("an empirical distribution takes factors or a trace, not sigma");
        if (auto f = v.find("factors")) {
            for (const auto& e : f->elements()) {
                const double x = e.as_double();
                if (!(x >= 0 && x <= 1000)) e.fail("expected a factor from 0 to 1000");
                j.factors.push_back(x);
            }
            if (j.factors.empty()) f->fail("expected a list of duration factors");
        }
        if (auto t = v.find("trace")) {
            if (v.find("factors")) t->fail("give factors or a trace, not both");
            std::vector<std::string> files;
            for (const auto& item : t->is_sequence() ? t->elements() : std::vector{*t}) {
                std::filesystem::path file = item.as_string();
                if (file.is_relative()) file = std::filesystem::path(item.location().file).parent_path() / file;
                if (!std::filesystem::exists(file)) item.fail(fmt::format("trace file '{}' not found", file.string()));
                files.push_back(file.string());
            }
            if (files.empty()) t->fail("expected a trace file or a list of them (one per rank)");
            j.factors = empirical_jitter_factors(traces::import_traces(files, traces::ImportOptions{}));
            if (j.factors.empty())
                t->fail("the trace has no kernel measured three or more times: no empirical distribution to draw from");
        }
        if (j.factors.empty()) v.fail("an empirical distribution needs factors (a list) or a trace");
        return j;
    }
    if (v.find("factors") || v.find("trace")) v.fail("factors and trace belong to the empirical distribution");
    if (j.distribution != Jitter::Distribution::none) {
        const engine::YamlValue sigma = v.require("sigma");
        j.sigma = sigma.as_double();
        const double most = j.distribution == Jitter::Distribution::normal ? 1.0 : 3.0;
        if (!(j.sigma >= 0 && j.sigma <= most))
            sigma.fail(fmt::format("expected a standard deviation from 0 to {} ({} of the kernel's time)", most,
                                   j.distribution == Jitter::Distribution::normal ? "a fraction" : "in log space"));
    }
    return j;
}

void read_variability(const engine::YamlValue& system, Variability& variability, RunRepetition& repetition) {
    if (auto v = system.find("seed")) {
        const std::int64_t seed = v->as_int();
        if (seed < 0) v->fail("expected a seed from 0");
        variability.seed = static_cast<std::uint64_t>(seed);
    }
    if (auto v = system.find("stragglers"))
        for (const auto& e : v->elements()) variability.stragglers.push_back(read_straggler(e));
    if (auto v = system.find("jitter")) variability.jitter = read_jitter(*v);
    if (auto v = system.find("iterations"))
        repetition.iterations = count_in(*v, RunRepetition::max_iterations, "an iteration count");
    if (auto v = system.find("samples"))
        repetition.samples = count_in(*v, RunRepetition::max_samples, "a sample count");
}

}  // namespace

void read_system(const engine::YamlValue& system, ReplayOptions& options, RunRepetition& repetition) {
    system.expect_only_keys({"network",
                             "compute_slowdown_during_comm",
                             "collective_algorithm",
                             "collective_protocol",
                             "communicator_algorithms",
                             "channels",
                             "chunks",
                             "rank_to_gpu",
                             "min_kernel_time",
                             "compute_scale",
                             "fold_model",
                             "collective_model",
                             "memory_check",
                             "stragglers",
                             "jitter",
                             "seed",
                             "iterations",
                             "samples",
                             "events",
                             "closed_form",
                             "repeat_calls"});
    read_variability(system, options.variability, repetition);
    if (auto v = system.find("collective_model")) {
        const std::string model = v->as_string();
        if (model != "cost-model" && model != "flows")
            v->fail(fmt::format("expected flows or cost-model, got \"{}\"", model));
        options.collective_model =
            model == "cost-model" ? ReplayOptions::CollectiveModel::cost_model : ReplayOptions::CollectiveModel::flows;
    }
    if (auto v = system.find("fold_model")) {
        const std::string model = v->as_string();
        if (model != "cost-model" && model != "flows")
            v->fail(fmt::format("expected cost-model or flows, got \"{}\"", model));
        options.fold_model = model == "flows" ? ReplayOptions::FoldModel::flows : ReplayOptions::FoldModel::cost_model;
    }
    if (auto v = system.find("chunks")) {
        if (v->as_string() == "auto") {
            options.tree_chunks = 0;
        } else {
            const auto chunks = v->as_int();
            if (chunks < 1 || chunks > 1024) v->fail("expected 'auto' or a chunk count from 1 to 1024");
            options.tree_chunks = static_cast<std::uint32_t>(chunks);
        }
    }
    if (auto v = system.find("communicator_algorithms")) {
        for (const std::string& name : v->keys()) {
            const auto entry = v->require(name);
            const auto algo = find_collective_algorithm(entry.as_string());
            if (!algo)
                entry.fail(fmt::format("unknown collective algorithm '{}' (known: {})", entry.as_string(),
                                       collective_algorithm_names()));
            options.communicator_algorithms.emplace_back(name, *algo);
        }
    }
    if (auto v = system.find("collective_protocol")) {
        const std::string name = v->as_string();
        if (name == "none") {
            options.protocols = false;
        } else if (name != "auto") {
            options.protocol = parse_nccl_protocol(name);
            if (!options.protocol)
                v->fail(fmt::format("unknown protocol '{}' (known: auto, LL, LL128, Simple, none)", name));
        }
    }
    if (auto v = system.find("channels")) {
        const auto channels = v->as_int();
        if (channels < 1 || channels > 64) v->fail("expected a channel count from 1 to 64");
        options.channels = static_cast<std::uint32_t>(channels);
    }
    if (auto v = system.find("closed_form")) options.closed_form = v->as_bool();
    if (auto v = system.find("repeat_calls")) options.repeat_calls = v->as_bool();
    if (auto v = system.find("network")) {
        const std::string model = v->as_string();
        if (model == "max-min")
            options.network.sharing = SharingModel::max_min;
        else if (model == "contention-free")
            options.network.sharing = SharingModel::contention_free;
        else
            v->fail(fmt::format("unknown network model '{}' (known: max-min, contention-free)", model));
    }
    if (auto v = system.find("compute_slowdown_during_comm")) {
        options.compute.slowdown_during_comm = v->as_double();
        if (options.compute.slowdown_during_comm < 0 || options.compute.slowdown_during_comm > 10)
            v->fail("expected a fraction from 0 to 10 (0.15 means 15% slower)");
    }
    if (auto v = system.find("collective_algorithm")) {
        const auto algo = find_collective_algorithm(v->as_string());
        if (!algo)
            v->fail(fmt::format("unknown collective algorithm '{}' (known: {})", v->as_string(),
                                collective_algorithm_names()));
        options.algorithm = *algo;
    }
    if (auto v = system.find("min_kernel_time")) options.compute.min_kernel_time = v->as_time();
    if (auto v = system.find("compute_scale")) {
        options.compute.scale = v->as_double();
        if (!(options.compute.scale >= 0) || options.compute.scale > 1e6)
            v->fail("expected a factor from 0 to 1e6 on every kernel's time (0: computation free)");
    }
    if (auto v = system.find("rank_to_gpu")) {
        for (const auto& e : v->elements()) {
            const auto gpu = e.as_int();
            if (gpu < 0) e.fail("expected a GPU index from 0");
            options.rank_to_gpu.push_back(static_cast<std::uint32_t>(gpu));
        }
    }
}

std::vector<double> empirical_jitter_factors(const traces::OpGraph& graph) {
    const bool by_occurrence = graph.rank_count >= 3;
    // (name, occurrence on its rank) -> durations; ordered keys, so the factors come out in one order.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::int64_t>> groups;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> seen;  // (rank, name) -> occurrences so far
    for (std::size_t i = 0; i < graph.durations.size(); ++i) {
        const traces::Op& op = graph.ops[i];
        if (op.kind != traces::OpKind::compute || graph.durations[i].count() <= 0) continue;
        const std::uint32_t occurrence = by_occurrence ? seen[{graph.rank_of(op).value, op.name}]++ : 0;
        groups[{op.name, occurrence}].push_back(graph.durations[i].count());
    }
    std::vector<double> factors;
    for (auto& [key, durations] : groups) {
        if (durations.size() < 3) continue;
        std::vector<std::int64_t> sorted = durations;
        std::sort(sorted.begin(), sorted.end());
        const std::size_t n = sorted.size();
        const double median = n % 2 ? static_cast<double>(sorted[n / 2])
                                    : (static_cast<double>(sorted[n / 2 - 1]) + static_cast<double>(sorted[n / 2])) / 2;
        for (const std::int64_t d : durations) factors.push_back(static_cast<double>(d) / median);
    }
    return factors;
}

}  // namespace clustersim::sim
