// The dlrm generator against closed forms: the exchange of pooled embeddings per sharding (all-to-all sends,
// reduce-scatter buffers), the tables' memory summed over ranks, the MLP gradients reduced, and located errors.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "sim/scenario/scenario.h"
#include "tests/workloads/generate.h"
#include "workloads/workload_registry.h"

using namespace clustersim;
using traces::CollectiveKind;
using traces::OpKind;

namespace {

traces::OpGraph generate(const std::string& yaml) { return testing::generate("dlrm", yaml); }
bool g_name_has(const traces::OpGraph& g, const traces::Op& op, const char* part) {
    return g.names[op.name].find(part) != std::string::npos;
}

const std::uint64_t kaggle_rows = 1460 + 583 + 10131227 + 2202608 + 305 + 24 + 12517 + 633 + 3 + 93145 + 5683 +
                                  8351593 + 3194 + 27 + 14992 + 5461306 + 10 + 5652 + 2173 + 4 + 7046547 + 18 + 15 +
                                  286181 + 105 + 142572;

}  // namespace

TEST_CASE("dlrm exchanges the pooled embeddings each sharding needs", "[workloads][dlrm]") {
    // 26 tables of dim 16 in fp32, 8 ranks of 1,024 samples.
    const double local = 1024, n = 8, dim = 16, width = 4;
    for (const char* sharding : {"table", "row", "column"}) {
        INFO(sharding);
        const auto g =
            generate(fmt::format("{{generator: dlrm, ranks: 8, batch_per_gpu: 1024, sharding: {}}}", sharding));
        double sent = 0, held = 0, grads = 0;
        std::uint32_t exchanges = 0;
        for (const auto& op : g.ops) {
            if (op.kind == OpKind::alloc && op.memory() == traces::MemoryUse::parameters) held += double(op.bytes());
            if (op.kind != OpKind::collective) continue;
            if (op.collective == CollectiveKind::all_reduce) {
                grads += double(op.bytes());
                continue;
            }
            ++exchanges;
            if (g.names[op.name].find("gradient") == std::string::npos) sent += double(op.bytes());
        }
        REQUIRE(exchanges == 16);  // forward and backward on every rank
        const std::string s = sharding;
        if (s == "table") {
            // Every table's pooled vectors go to the 7 other ranks' samples.
            REQUIRE(sent == 26 * local * (n - 1) * dim * width);
        } else if (s == "row") {
            // A reduce-scatter of every table's partial sums for the global batch, on every rank.
            REQUIRE(sent == n * 26 * local * n * dim * width);
        } else {
            REQUIRE(sent == n * 26 * local * (n - 1) * dim / n * width);
        }
        // The MLPs' parameters (bottom 13-512-256-64-16, top 367-512-256-1) and every table once, over the ranks.
        const double bottom = 13 * 512 + 512 + 512 * 256 + 256 + 256 * 64 + 64 + 64 * 16 + 16;
        const double top = 367 * 512 + 512 + 512 * 256 + 256 + 256 * 1 + 1;
        REQUIRE(std::abs(held - (double(kaggle_rows) * dim * width + n * 4 * (bottom + top))) < 64);
        REQUIRE(grads == n * 4 * (bottom + top));
    }
}

TEST_CASE("dlrm's terabyte model: the Criteo Terabyte tables at dim 128, its MLPs; given keys override it",
          "[workloads][dlrm]") {
    const double local = 512, n = 8, dim = 128, width = 4;
    const double rows = 39884406.0 + 39043 + 17289 + 7420 + 20263 + 3 + 7120 + 1543 + 63 + 38532951 + 2953546 + 403346 +
                        10 + 2208 + 11938 + 155 + 4 + 976 + 14 + 39979771 + 25641295 + 39664984 + 585935 + 12972 + 108 +
                        36;
    const auto g = generate("{generator: dlrm, model: terabyte, ranks: 8, batch_per_gpu: 512}");
    double sent = 0, held = 0, grads = 0;
    for (const auto& op : g.ops) {
        if (op.kind == OpKind::alloc && op.memory() == traces::MemoryUse::parameters) held += double(op.bytes());
        if (op.kind != OpKind::collective) continue;
        if (op.collective == CollectiveKind::all_reduce) {
            grads += double(op.bytes());
        } else if (g.names[op.name].find("gradient") == std::string::npos) {
            sent += double(op.bytes());
        }
    }
    REQUIRE(sent == 26 * local * (n - 1) * dim * width);  // table-wise: every pooled vector to the other ranks
    // Bottom 13-512-256-128; top from the interaction's 27 x 26 / 2 + 128 = 479: 479-1024-1024-512-256-1.
    const double bottom = 13 * 512 + 512 + 512 * 256 + 256 + 256 * 128 + 128;
    const double top = 479 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 * 512 + 512 + 512 * 256 + 256 + 256 + 1;
    REQUIRE(std::abs(held - (rows * dim * width + n * 4 * (bottom + top))) < 64);
    REQUIRE(grads == n * 4 * (bottom + top));
    // Keys given override the model's.
    const auto smaller = generate("{generator: dlrm, model: terabyte, dim: 64, bottom_mlp: 13-512-256-64}");
    double smaller_held = 0;
    for (const auto& op : smaller.ops)
        if (op.kind == OpKind::alloc && op.memory() == traces::MemoryUse::parameters)
            smaller_held += double(op.bytes());
    REQUIRE(smaller_held < held / 1.9);
    REQUIRE_THROWS_WITH(generate("{generator: dlrm, model: criteo}"),
                        Catch::Matchers::Contains("unknown DLRM model 'criteo' (known: kaggle, terabyte)"));
}

TEST_CASE("dlrm refuses impossible plans with located errors", "[workloads][dlrm]") {
    REQUIRE_THROWS_WITH(generate("{generator: dlrm, ranks: 3, sharding: column}"),
                        Catch::Matchers::Contains("splits dim 16 over 3 ranks"));
    REQUIRE_THROWS_WITH(generate("{generator: dlrm, dim: 32}"),
                        Catch::Matchers::Contains("the bottom MLP ends at 16, not at the embedding dim 32"));
    REQUIRE_THROWS_WITH(generate("{generator: dlrm, table_rows: 10-x-3}"),
                        Catch::Matchers::Contains("test.yaml:1") && Catch::Matchers::Contains("table_rows"));
    REQUIRE_THROWS_WITH(generate("{generator: dlrm, sharding: diagonal}"),
                        Catch::Matchers::Contains("unknown sharding"));
}

TEST_CASE("a generated op beyond 256 TiB is a located error, not a clock overflow", "[workloads][dlrm]") {
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/11-dlrm-embedding-sharding/scenario.yaml";
    REQUIRE_THROWS_WITH(
        sim::load_scenario(path, {"workload.pooling=10000", "workload.batch_per_gpu=16000000", "workload.dim=65536",
                                  "workload.bottom_mlp=13-65536"}),
        Catch::Matchers::Contains("scenario.yaml:9:3") && Catch::Matchers::Contains("'step0 embedding lookup'") &&
            Catch::Matchers::Contains("would move 256 TiB or more") && Catch::Matchers::Contains("beyond 256 TiB"));
}

TEST_CASE("dlrm's pipelined lookups: the next step's lookup and exchange run before this step's update",
          "[workloads][dlrm]") {
    const auto plain = generate("{generator: dlrm, ranks: 4, batch_per_gpu: 512, steps: 3}");
    const auto piped = generate("{generator: dlrm, ranks: 4, batch_per_gpu: 512, steps: 3, pipeline_lookups: true}");
    // The same ops (names, sizes) on every rank, in another order on the compute stream.
    REQUIRE(plain.ops.size() == piped.ops.size());
    auto index_of = [](const traces::OpGraph& g, std::uint32_t rank, const std::string& name) {
        for (std::uint32_t i = 0; i < g.ops.size(); ++i)
            if (g.rank_of(g.ops[i]).value == rank && g.names[g.ops[i].name] == name) return i;
        FAIL("no op " << name);
        return 0U;
    };
    for (std::uint32_t s = 1; s < 3; ++s) {
        const std::string now = fmt::format("step{} ", s - 1), next = fmt::format("step{} ", s);
        const auto lookup = index_of(piped, 0, next + "embedding lookup");
        // Without pipelining the lookup waits for the previous step's dense optimizer; with it, for the previous
        // step's interaction backward, and comes before that step's bottom MLP backward and sparse update.
        const auto deps = piped.deps(traces::OpId{lookup});
        REQUIRE(deps.size() == 1);
        REQUIRE(piped.names[piped.ops[deps[0].index()].name] == now + "interaction backward");
        REQUIRE(lookup < index_of(piped, 0, now + "bottom MLP backward"));
        REQUIRE(lookup < index_of(piped, 0, now + "embedding update"));
        const auto plain_deps = plain.deps(traces::OpId{index_of(plain, 0, next + "embedding lookup")});
        REQUIRE(plain.names[plain.ops[plain_deps[0].index()].name] == now + "dense optimizer");
        // Its exchange follows the previous step's gradient exchange on the exchange stream.
        REQUIRE(index_of(piped, 0, next + "embedding exchange") >
                index_of(piped, 0, now + "embedding gradient exchange"));
    }
    // On one GPU (no exchange) the kernels only change order on one stream: the same time to the picosecond.
    const std::string path =
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/11-dlrm-embedding-sharding/scenario.yaml";
    auto run = [&](std::vector<std::string> sets) {
        return sim::run_scenario(sim::load_scenario(path, sets)).replay.timeline.makespan;
    };
    const std::vector<std::string> one = {"workload.ranks=1", "workload.steps=3"};
    auto with = [](std::vector<std::string> v, const char* s) {
        v.emplace_back(s);
        return v;
    };
    REQUIRE(run(with(one, "workload.pipeline_lookups=true")) == run(one));
    // On 16 GPUs the exchange of steps 1 and 2 hides behind the backward of the step before: faster.
    const std::vector<std::string> sixteen = {"workload.steps=3"};
    REQUIRE(run(with(sixteen, "workload.pipeline_lookups=true")) < run(sixteen));
    REQUIRE_THROWS_WITH(generate("{generator: dlrm, pipeline_lookups: true}"),
                        Catch::Matchers::Contains("pipeline_lookups") && Catch::Matchers::Contains("steps >= 2"));
}

TEST_CASE("dlrm's quantized exchange sends a fraction of the bytes, cast before and after", "[workloads][dlrm]") {
    const std::string base = "{generator: dlrm, ranks: 8, batch_per_gpu: 1024, sharding: column";
    const auto plain = generate(base + "}");
    const auto half = generate(base + ", exchange_compression: quantize, exchange_compression_ratio: 0.5}");
    auto exchanges = [](const traces::OpGraph& g) {
        std::vector<std::uint64_t> out;
        for (const auto& op : g.ops)
            if (g.rank_of(op).value == 0 && op.kind == OpKind::collective &&
                g.names[op.name].find("embedding") != std::string::npos)
                out.push_back(op.bytes());
        return out;
    };
    const auto a = exchanges(plain), b = exchanges(half);
    REQUIRE(a.size() == 2);  // forward and backward
    REQUIRE(b.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) REQUIRE(b[i] == a[i] / 2);
    std::size_t casts = 0;
    for (const auto& op : half.ops)
        if (half.rank_of(op).value == 0 && g_name_has(half, op, "quantize")) ++casts;
    REQUIRE(casts == 4);  // quantize and dequantize, forward and backward
    REQUIRE_THROWS_WITH(generate(base + ", exchange_compression: topk}"),
                        Catch::Matchers::Contains("none or quantize"));
}
