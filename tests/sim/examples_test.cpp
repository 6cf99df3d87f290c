// Every scenario under docs/examples/ runs as documented and reproduces its expected/summary.json byte for
// byte; running one twice gives identical outputs (timeline, summary, CSV).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "engine/error.h"
#include "sim/scenario/scenario.h"
#include "tests/traces/report/report_checks.h"
#include "traces/perfetto_writer.h"
#include "traces/report/html_report.h"
#include "traces/summary_writers.h"

using namespace clustersim;

namespace {
std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}
std::vector<std::filesystem::path> example_scenarios() {
    std::vector<std::filesystem::path> out;
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples")) {
        if (std::filesystem::exists(entry.path() / "scenario.yaml")) out.push_back(entry.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}
}  // namespace

TEST_CASE("every example scenario reproduces its expected summary", "[examples]") {
    const auto examples = example_scenarios();
    REQUIRE(!examples.empty());
    for (const auto& dir : examples) {
        INFO(dir.string());
        if (std::filesystem::exists(dir / "expected" / "error.txt")) {
            // An example of a refused plan: the message, after the scenario's path, byte for byte.
            std::string expected = read_text(dir / "expected" / "error.txt");
            while (!expected.empty() && expected.back() == '\n') expected.pop_back();
            try {
                (void)sim::load_scenario((dir / "scenario.yaml").string(), {});
                FAIL("the scenario loaded, but expected/error.txt says it is refused");
            } catch (const engine::InputError& e) {
                const std::string what = e.what();
                REQUIRE(what.substr(what.find("scenario.yaml")) == expected);
            }
            continue;
        }
        const auto scenario = sim::load_scenario((dir / "scenario.yaml").string(), {});
        const auto result = sim::run_scenario(scenario);
        REQUIRE(std::filesystem::exists(dir / "expected" / "summary.json"));
        REQUIRE(traces::summary_json(result.summary, scenario.graph) == read_text(dir / "expected" / "summary.json"));
        // Its report: sections, one bar per rank group adding up to the iteration, a heatmap cell per busy bin.
        const std::string html = traces::report::html_report(
            scenario.graph, {{"faithful", &result.summary, &result.replay.timeline}}, {scenario.name});
        testing::check_report(html, result.summary, result.replay.timeline);
        // The critical path's parts add up to the iteration, none negative.
        const auto& cp = result.summary.critical_path;
        REQUIRE(cp.waiting >= engine::Time{0});
        REQUIRE(cp.compute + cp.communication + cp.copies + cp.waiting == result.summary.makespan);
    }
}

TEST_CASE("two runs of the default scenario give byte-identical outputs", "[examples][determinism]") {
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";
    std::vector<std::string> outputs[2];
    for (auto& out : outputs) {
        const auto scenario = sim::load_scenario(path, {});
        const auto result = sim::run_scenario(scenario);
        out.push_back(traces::perfetto_json(scenario.graph, result.replay.timeline, traces::PerfettoOptions{}));
        out.push_back(traces::summary_json(result.summary, scenario.graph));
        out.push_back(traces::ranks_csv(result.summary));
    }
    REQUIRE(outputs[0] == outputs[1]);
    REQUIRE(outputs[0][0].size() > 10'000);
}

TEST_CASE("scenario errors name the file, the line and the key", "[examples][input]") {
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"system.collective_protocol=LL256"}),
                        Catch::Matchers::Contains("--set: system.collective_protocol: unknown protocol 'LL256'"));
    REQUIRE_THROWS_WITH(
        sim::load_scenario(path, {"system.collective_algorithm=butterfly"}),
        Catch::Matchers::Contains("unknown collective algorithm 'butterfly' (known: direct, double_tree"));
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"workload.pp=0"}),
                        Catch::Matchers::Contains("--set: workload.pp: expected an integer from 1"));
    REQUIRE_THROWS_WITH(
        sim::load_scenario(path, {"workload.dp=8"}),
        Catch::Matchers::Contains("workload: the workload has 32 ranks but the topology 'dgx-h100 x2") &&
            Catch::Matchers::Contains("has 16 GPUs"));
}

TEST_CASE("a scenario replays trace files of any format, with their import options", "[examples][input]") {
    const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/03-simai-moe-symmetry/scenario.yaml";
    const auto folded = sim::load_scenario(path, {});
    REQUIRE(folded.graph.rank_count == 4);
    REQUIRE(folded.graph.job_size() == 64);
    REQUIRE(folded.workload_description.rfind("simai trace workload.txt", 0) == 0);
    const auto whole = sim::load_scenario(path, {"workload.replicas=16"});
    REQUIRE(whole.graph.rank_count == 64);
    REQUIRE(whole.graph.job_ranks.empty());
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"workload.format=csv"}),
                        Catch::Matchers::Contains("--set: workload.format: expected a trace format (auto,") &&
                            Catch::Matchers::Contains("got \"csv\""));
    REQUIRE_THROWS_WITH(
        sim::load_scenario(path, {"workload.trace=[workload.txt, missing.txt]"}),
        Catch::Matchers::Contains("trace file '") && Catch::Matchers::Contains("missing.txt' not found"));
    REQUIRE(sim::load_scenario(path, {"workload.pipeline_schedule=gpipe"}).graph.ops.size() == 144);
    REQUIRE_THROWS_WITH(
        sim::load_scenario(path, {"workload.pipeline_schedule=zigzag"}),
        Catch::Matchers::Contains("workload.pipeline_schedule: expected 1f1b or gpipe, got \"zigzag\""));
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"workload.replicas=0"}),
                        Catch::Matchers::Contains("workload.replicas: expected a positive integer, got 0"));
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"system.fold_model=exact"}),
                        Catch::Matchers::Contains("system.fold_model: expected cost-model or flows, got \"exact\""));
}

TEST_CASE("a communicator's algorithm can be chosen in the scenario", "[examples]") {
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml";
    const auto scenario = sim::load_scenario(path, {"system.communicator_algorithms={dp.stage0: direct}"});
    const auto result = sim::run_scenario(scenario);
    const auto direct = *sim::find_collective_algorithm("direct");
    std::size_t on_stage0 = 0;
    for (const auto& c : result.replay.collectives) {
        const bool stage0 = scenario.graph.comms[c.comm.index()].name == "dp.stage0";
        if (stage0) ++on_stage0;
        REQUIRE((c.algorithm == direct) == stage0);
    }
    REQUIRE(on_stage0 == 4);  // one per layer of the stage
    REQUIRE_THROWS_WITH(
        sim::load_scenario(path, {"system.communicator_algorithms={dp.stage0: spiral}"}),
        Catch::Matchers::Contains("system.communicator_algorithms.dp.stage0: unknown collective algorithm 'spiral'"));
}

TEST_CASE("communication is attributed to communicator families", "[examples][analysis]") {
    // Example 02: one all-reduce of 80 MB on 'world' per rank; each rank's time in it is its communication time.
    const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/02-ring-allreduce-8gpu/scenario.yaml";
    const auto scenario = sim::load_scenario(path, {});
    const auto result = sim::run_scenario(scenario);
    REQUIRE(result.summary.communication.size() == 1);
    const auto& world = result.summary.communication.front();
    REQUIRE(world.group == "world");
    REQUIRE(world.ops == 8);
    REQUIRE(world.bytes == 640'000'000);
    engine::Time communication{0};
    for (const auto& r : result.summary.ranks) communication += r.communication;
    REQUIRE(world.waiting + world.transferring == communication);
    // Example 01: pipeline transfers ("pp0.0-1" ... -> "pp") and data-parallel all-reduces ("dp.stage0" -> "dp").
    const auto pipeline = sim::run_scenario(sim::load_scenario(
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/01-dgx-h100-pipeline-dp/scenario.yaml", {}));
    std::vector<std::string> groups;
    for (const auto& c : pipeline.summary.communication) groups.push_back(c.group);
    REQUIRE(groups == std::vector<std::string>{"pp", "dp"});
}

TEST_CASE("a run owns its output folder: safe names, no stale timeline, a bad folder fails before the run",
          "[examples][input]") {
    const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/02-ring-allreduce-8gpu/scenario.yaml";
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"name=../escape"}),
                        Catch::Matchers::Contains("--set: name: expected a name without '/'"));
    REQUIRE_THROWS_WITH(sim::load_scenario(path, {"name=.."}), Catch::Matchers::Contains("got \"..\""));
    const auto dir = std::filesystem::temp_directory_path() / "clustersim_owned_output";
    std::filesystem::remove_all(dir);
    sim::prepare_output_dir(dir.string());
    { std::ofstream(dir / "timeline.json") << "stale"; }
    const auto scenario = sim::load_scenario(path, {"outputs.perfetto=false"});
    sim::write_outputs(scenario, sim::run_scenario(scenario), dir.string());
    REQUIRE(std::filesystem::exists(dir / "summary.json"));
    REQUIRE(!std::filesystem::exists(dir / "timeline.json"));
    // A folder that cannot be created: an input error naming it.
    { std::ofstream(dir / "a-file") << "x"; }
    REQUIRE_THROWS_WITH(sim::prepare_output_dir((dir / "a-file" / "sub").string()),
                        Catch::Matchers::Contains("a-file/sub: cannot create the output folder"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("resolved.yaml of a trace scenario runs again from another folder", "[sim][scenario]") {
    const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/03-simai-moe-symmetry/scenario.yaml";
    const sim::Scenario s = sim::load_scenario(path, {});
    const auto copy = std::filesystem::temp_directory_path() / "clustersim_resolved" / "resolved.yaml";
    std::filesystem::create_directories(copy.parent_path());
    std::ofstream(copy) << s.resolved_yaml;
    const sim::Scenario again = sim::load_scenario(copy.string(), {});
    REQUIRE(again.graph.ops == s.graph.ops);
    REQUIRE(again.graph.comms == s.graph.comms);
}

TEST_CASE("every example's README states the iteration time its run gives", "[examples]") {
    // Numbers in docs come from runs the tests check: the README quotes the makespan of expected/summary.json
    // (itself checked against the run above), as us, ms or s to three decimals or as whole microseconds.
    for (const auto& dir : example_scenarios()) {
        if (!std::filesystem::exists(dir / "expected" / "summary.json")) continue;
        INFO(dir.string());
        const std::string summary = read_text(dir / "expected" / "summary.json");
        const auto at = summary.find("\"makespan_us\": ");
        REQUIRE(at != std::string::npos);
        const double us = std::stod(summary.substr(at + 15));
        std::string grouped = std::to_string(static_cast<long long>(std::llround(us)));
        for (int i = static_cast<int>(grouped.size()) - 3; i > 0; i -= 3)
            grouped.insert(static_cast<std::size_t>(i), ",");
        const std::string readme = read_text(dir / "README.md");
        const bool stated = readme.find(fmt::format("{:.3f} ms", us / 1e3)) != std::string::npos ||
                            readme.find(fmt::format("{:.3f} s", us / 1e6)) != std::string::npos ||
                            readme.find(grouped + " us") != std::string::npos ||
                            readme.find(fmt::format("{:.3f} us", us)) != std::string::npos;
        REQUIRE(stated);
    }
}

TEST_CASE("resolved.yaml of a generated workload states its defaults and gives the same graph", "[sim][scenario]") {
    for (const char* example : {"01-dgx-h100-pipeline-dp", "05-llama3-70b-zero1-64-h100"}) {
        INFO(example);
        const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/" + example + "/scenario.yaml";
        const sim::Scenario s = sim::load_scenario(path, {});
        REQUIRE(s.resolved_yaml.find("dtype: bf16") != std::string::npos);  // a default the scenario does not give
        const auto copy = std::filesystem::temp_directory_path() / "clustersim_resolved" / "generated.yaml";
        std::filesystem::create_directories(copy.parent_path());
        std::ofstream(copy) << s.resolved_yaml;
        const sim::Scenario again = sim::load_scenario(copy.string(), {});
        REQUIRE(again.graph.ops == s.graph.ops);
        REQUIRE(again.resolved_yaml == s.resolved_yaml);
    }
}

TEST_CASE("the studies' READMEs quote the runs their tables come from", "[examples]") {
    // A row or two of each study's table (the other rows come from the same commands with other values).
    struct Point {
        const char* example;
        std::vector<std::string> overrides;
    };
    const Point points[] = {
        {"10-vgg16-gradient-compression",
         {"topology.nic_bandwidth=10 Gb/s", "workload.compression=none", "workload.compression_ratio=0.01"}},
        {"10-vgg16-gradient-compression",
         {"topology.nic_bandwidth=10 Gb/s", "workload.compression=topk", "workload.compression_ratio=0.01"}},
        {"10-vgg16-gradient-compression",
         {"topology.nic_bandwidth=10 Gb/s", "workload.compression=lowrank", "workload.compression_ratio=0.05"}},
        {"11-dlrm-embedding-sharding", {"workload.sharding=row"}},
        {"11-dlrm-embedding-sharding", {"workload.model=terabyte", "workload.sharding=column"}},
        {"12-resnet50-local-sgd", {"workload.local_steps=1"}},
        {"12-resnet50-local-sgd", {"topology.nic_bandwidth=25 Gb/s", "workload.local_steps=16"}},
        {"12-resnet50-local-sgd", {"workload.local_steps=2", "workload.averaging_group=8", "workload.global_every=4"}},
        {"12-resnet50-local-sgd", {"workload.local_steps=4", "workload.clients_per_round=8"}},
        {"12-resnet50-local-sgd",
         {"workload.local_steps=4", "workload.clients_per_round=8", "workload.round_deadline=150 ms",
          "system.stragglers=[{ranks: [3, 17, 22], slowdown: 1.5}]"}},
        {"13-resnet50-gossip", {"workload.gossip_graph=one_peer_exponential"}},
        {"14-resnet50-parameter-servers", {"workload.servers=8", "workload.ps_mode=async"}},
        {"15-vgg16-cpu-offload", {"topology.pcie_gen=5", "workload.host_bandwidth=200 GB/s"}},
        {"15-vgg16-cpu-offload", {"workload.offload=none"}},
        {"16-llama3-70b-inference", {"workload.tp=4", "workload.batch=32"}},
        {"18-degraded-links", {"system.events=[{at: 0 us, link: n1.nic3 <-> leaf0.rail3, down: true}]"}},
        {"20-heterogeneous-pipeline", {"workload.placement=even", "workload.stage_layers=5,5,15,15"}},
        {"21-cross-datacenter", {"workload.rank_order=tp-cp-ep-pp-dp", "topology.wan_bandwidth=100 Gb/s"}},
        {"22-edge-pipeline",
         {"topology.bandwidth=100 Mb/s", "workload.pp=1", "workload.dp=4", "workload.layers_per_stage=12",
          "workload.microbatches=2"}},
        {"21-cross-datacenter",
         {"topology.wan_bandwidth=25 Gb/s", "workload.pp_compression=lowrank", "workload.pp_compress=both"}},
        {"21-cross-datacenter",
         {"workload.rank_order=tp-cp-ep-pp-dp", "workload.dp_compression=topk", "workload.dp_compression_ratio=0.01"}},
        {"22-edge-pipeline", {"topology.bandwidth=10 Gb/s"}},
        {"22-edge-pipeline",
         {"workload.pp_compression=quantize", "workload.pp_compress=both", "workload.pp_compression_ratio=0.25"}},
        {"22-edge-pipeline", {"workload.pp=1", "workload.layers_per_stage=12"}},
        {"19-two-jobs-placement",
         {"jobs[0].placement=packed", "jobs[1].placement=packed", "jobs[1].workload.model=vgg16"}},
        {"19-two-jobs-placement",
         {"jobs[0].placement=random", "jobs[1].placement=random", "jobs[1].workload.model=resnet50"}},
        {"18-degraded-links", {"system.events=[{at: 10 ms, until: 20 ms, device: leaf0.rail3, down: true}]"}},
        {"11-dlrm-embedding-sharding",
         {"workload.sharding=column", "workload.dim=128", "workload.bottom_mlp=13-512-256-128"}},
        {"11-dlrm-embedding-sharding",
         {"workload.model=terabyte", "workload.sharding=row", "workload.steps=4", "workload.pipeline_lookups=true"}},
        {"24-cnn-data-vs-pipeline-parallel",
         {"workload.model=resnet50", "topology.nic_bandwidth=10 Gb/s", "workload.dp=8", "workload.pp=4",
          "workload.microbatches=32"}},
        {"24-cnn-data-vs-pipeline-parallel", {"workload.model=resnet50", "workload.stage_layers=18,36"}},
        {"24-cnn-data-vs-pipeline-parallel",
         {"topology.nic_bandwidth=10 Gb/s", "workload.dp=32", "workload.pp=1", "workload.microbatches=1",
          "workload.mp=8", "workload.mp_from=fc6"}},
        {"25-graph-embedding-partitions",
         {"workload.negatives=1000", "workload.ordering=sequential", "workload.buffer=4"}},
        {"25-graph-embedding-partitions", {"topology.pcie_gen=3"}},
        {"26-resnet50-large-batch",
         {"topology.nodes=32", "workload.dp=256", "workload.batch_per_gpu=16", "topology.nic_bandwidth=25 Gb/s"}},
        {"26-resnet50-large-batch", {"topology.nodes=2", "workload.dp=16", "topology.nic_bandwidth=25 Gb/s"}},
        {"11-dlrm-embedding-sharding",
         {"workload.model=terabyte", "workload.sharding=row", "workload.exchange_compression=quantize",
          "workload.exchange_compression_ratio=0.25"}},
        {"23-mixtral-inference-ep", {"workload.tp=8", "workload.ep=1", "workload.batch=64"}},
        {"23-mixtral-inference-ep", {"workload.tp=1", "workload.ep=8", "workload.batch=8"}},
    };
    for (const Point& p : points) {
        const std::string dir = std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/" + p.example;
        const auto result = sim::run_scenario(sim::load_scenario(dir + "/scenario.yaml", p.overrides));
        const double us = engine::to_seconds(result.summary.makespan) * 1e6;
        const std::string stated = us < 1e3   ? fmt::format("{:.3f} us", us)
                                   : us < 1e6 ? fmt::format("{:.3f} ms", us / 1e3)
                                              : fmt::format("{:.3f} s", us / 1e6);
        INFO(p.example << ": " << stated);
        CHECK(read_text(dir + "/README.md").find(stated) != std::string::npos);
    }
}

TEST_CASE("the straggler study quotes its samples' percentiles and a straggler's iteration", "[examples]") {
    const std::string dir = std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/17-data-parallel-stragglers";
    const std::string readme = read_text(dir + "/README.md");
    const auto ms = [](engine::Time t) { return fmt::format("{:.3f}", engine::to_seconds(t) * 1e3); };
    // 8 GPUs, sigma 0.2: a row of the noise table.
    const auto noisy = sim::run_scenario(
        sim::load_scenario(dir + "/scenario.yaml", {"topology.nodes=1", "workload.dp=8", "system.jitter.sigma=0.2"}));
    REQUIRE(noisy.summary.samples.samples == 8);
    INFO(ms(noisy.summary.samples.p50) << " / " << ms(noisy.summary.samples.p99));
    REQUIRE(readme.find(ms(noisy.summary.samples.p50) + " / " + ms(noisy.summary.samples.p99) + " ms") !=
            std::string::npos);
    // Rank 5 at 1.05x, no noise: every iteration the same, as the straggler table says.
    const auto slow = sim::run_scenario(sim::load_scenario(
        dir + "/scenario.yaml",
        {"system.samples=1", "system.jitter.sigma=0", "system.stragglers=[{ranks: [5], slowdown: 1.05}]"}));
    const auto& ends = slow.summary.iteration_ends;
    REQUIRE(ends.size() == 4);
    for (std::size_t k = 1; k < 4; ++k) REQUIRE(ends[k] - ends[k - 1] == ends[0]);
    REQUIRE(readme.find("| rank 5 at 1.05x | " + ms(ends[0]) + " ms each") != std::string::npos);
}
