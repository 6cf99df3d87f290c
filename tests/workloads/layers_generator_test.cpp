// The layers generator against closed forms: the presets' parameter and FLOP counts (torchvision's), DDP's buckets
// (sizes, order, bytes per step), the averaging period of local SGD, compressed message sizes, the YAML layer list
// with repeats, and located errors for impossible plans.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include <catch2/catch.hpp>

#include "tests/workloads/generate.h"
#include "workloads/layers/gossip_graph.h"
#include "workloads/layers/layer_list.h"
#include "workloads/workload_registry.h"

using namespace clustersim;
using traces::CollectiveKind;
using traces::OpKind;

namespace {

traces::OpGraph generate(const std::string& yaml) { return testing::generate("layers", yaml); }

struct Collectives {
    std::vector<std::uint64_t> bytes;  // rank 0's, in issue order
    std::vector<CollectiveKind> kinds;
};
Collectives rank0_collectives(const traces::OpGraph& g) {
    Collectives c;
    for (const auto& op : g.ops) {
        if (g.rank_of(op).value != 0 || op.kind != OpKind::collective) continue;
        c.bytes.push_back(op.bytes());
        c.kinds.push_back(op.collective);
    }
    return c;
}

}  // namespace

TEST_CASE("layer presets have torchvision's parameter and FLOP counts", "[workloads][layers]") {
    // torchvision: resnet50 num_params 25,557,032 and 4.09 GFLOPS (multiply-accumulates); vgg16 138,357,544 and
    // 15.47.
    const auto resnet = workloads::resnet50();
    REQUIRE(resnet.layers.size() == 54);  // 53 convolutions and the classifier
    REQUIRE(resnet.params() == 25'557'032);
    REQUIRE(resnet.forward_flops() == 2.0 * 4'089'184'256);
    const auto vgg = workloads::vgg16();
    REQUIRE(vgg.layers.size() == 16);
    REQUIRE(vgg.params() == 138'357'544);
    REQUIRE(vgg.forward_flops() == 2.0 * 15'470'264'320);
}

TEST_CASE("DDP buckets: reverse layer order, 1 MiB first then 25 MiB, every gradient reduced once",
          "[workloads][layers]") {
    const auto g = generate("{generator: layers, model: resnet50, dp: 4, steps: 2}");
    const auto c = rank0_collectives(g);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < c.bytes.size(); ++i) {
        REQUIRE(c.kinds[i] == CollectiveKind::all_reduce);
        total += c.bytes[i];
    }
    REQUIRE(total == 2 * 4 * 25'557'032ULL);  // fp32 gradients, two steps
    // The first bucket is the classifier alone (2,049,000 parameters: 8.2 MB, past 1 MiB at once).
    REQUIRE(c.bytes.front() == 4 * 2'049'000ULL);
    // Every later bucket but the last of a step holds at least 25 MiB, and less than 25 MiB plus one layer.
    const std::size_t per_step = c.bytes.size() / 2;
    for (std::size_t i = 1; i + 1 < per_step; ++i) REQUIRE(c.bytes[i] >= 25ULL << 20);
    REQUIRE(g.training.model_flops == 3.0 * 2 * 4'089'184'256.0 * 32 * 4 * 2);
}

TEST_CASE("local SGD averages parameters every H steps and reduces no gradients", "[workloads][layers]") {
    const auto g = generate("{generator: layers, model: resnet50, dp: 4, steps: 8, local_steps: 4}");
    const auto c = rank0_collectives(g);
    REQUIRE(c.bytes == std::vector<std::uint64_t>{4 * 25'557'032ULL, 4 * 25'557'032ULL});
    const auto single = generate("{generator: layers, model: resnet50, dp: 1}");
    REQUIRE(rank0_collectives(single).bytes.empty());
}

TEST_CASE("compressed buckets: top-k all-gathers values and indices, low-rank all-reduces factors",
          "[workloads][layers]") {
    const auto plain = rank0_collectives(generate("{generator: layers, model: vgg16, dp: 8}"));
    const auto topk =
        rank0_collectives(generate("{generator: layers, model: vgg16, dp: 8, compression: topk, compression_ratio: "
                                   "0.01}"));
    const auto lowrank = rank0_collectives(
        generate("{generator: layers, model: vgg16, dp: 8, compression: lowrank, compression_ratio: 0.05}"));
    REQUIRE(topk.bytes.size() == plain.bytes.size());
    for (std::size_t i = 0; i < plain.bytes.size(); ++i) {
        REQUIRE(topk.kinds[i] == CollectiveKind::all_gather);
        // 1% of the fp32 elements, each a 4-byte value and a 4-byte index.
        REQUIRE(std::llabs(static_cast<long long>(topk.bytes[i]) - static_cast<long long>(plain.bytes[i] / 50)) <= 1);
        REQUIRE(lowrank.kinds[i] == CollectiveKind::all_reduce);
        REQUIRE(std::llabs(static_cast<long long>(lowrank.bytes[i]) - static_cast<long long>(plain.bytes[i] / 20)) <=
                1);
    }
}

TEST_CASE("a YAML layer list with repeats, and located errors", "[workloads][layers]") {
    const auto dir = std::filesystem::temp_directory_path() / "clustersim_layers_test";
    std::filesystem::create_directories(dir);
    {
        std::ofstream out(dir / "lstm.yaml");
        out << "name: lstm\nlayers:\n"
               "  - {name: embed, flops: 0, params: 1000, activations: 64}\n"
               "  - {name: cell, flops: 2.0e6, params: 500000, activations: 128, gemm: [1, 512, 1024], repeat: 3}\n";
        std::ofstream bad(dir / "bad.yaml");
        bad << "layers:\n  - {name: x, flops: 1, parms: 3}\n";
    }
    const auto model = workloads::load_layer_model((dir / "lstm.yaml").string(), "", {});
    REQUIRE(model.layers.size() == 4);
    REQUIRE(model.layers[3].name == "cell.2");
    REQUIRE(model.params() == 1000 + 3 * 500'000);
    REQUIRE_THROWS_WITH(workloads::load_layer_model((dir / "bad.yaml").string(), "", {}),
                        Catch::Matchers::Contains("bad.yaml:2") && Catch::Matchers::Contains("parms"));
    REQUIRE_THROWS_WITH(generate("{generator: layers, model: resnet51}"),
                        Catch::Matchers::Contains("unknown model 'resnet51'"));
    REQUIRE_THROWS_WITH(generate("{generator: layers, dp: 3, global_batch: 100}"),
                        Catch::Matchers::Contains("global batch 100 does not split over dp = 3"));
    REQUIRE_THROWS_WITH(generate("{generator: layers, local_steps: 4, compression: topk}"),
                        Catch::Matchers::Contains("local SGD"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("gossip graphs: partners per round, symmetric where undirected, one message per partner",
          "[workloads][layers][gossip]") {
    using workloads::GossipGraph;
    const auto ring = workloads::gossip_peers(GossipGraph::ring, 32, 0, 1);
    const auto torus = workloads::gossip_peers(GossipGraph::torus, 32, 0, 1);  // 4 x 8
    const auto exponential = workloads::gossip_peers(GossipGraph::exponential, 32, 0, 1);
    REQUIRE(ring[0] == std::vector<std::uint32_t>{1, 31});
    REQUIRE(torus[0] == std::vector<std::uint32_t>{1, 7, 8, 24});
    REQUIRE(exponential[0] == std::vector<std::uint32_t>{1, 2, 4, 8, 16});  // directed: i + 2^k
    REQUIRE(workloads::gossip_sources(exponential)[0] == std::vector<std::uint32_t>{16, 24, 28, 30, 31});
    for (std::uint32_t round = 0; round < 7; ++round) {
        const auto one = workloads::gossip_peers(GossipGraph::one_peer_exponential, 32, round, 1);
        REQUIRE(one[3] == std::vector<std::uint32_t>{(3 + (1U << (round % 5))) % 32});
        const auto matching = workloads::gossip_peers(GossipGraph::random_matching, 32, round, 1);
        for (std::uint32_t r = 0; r < 32; ++r) {
            REQUIRE(matching[r].size() == 1);           // everyone paired: 32 is even
            REQUIRE(matching[matching[r][0]][0] == r);  // symmetric
        }
        REQUIRE(matching == workloads::gossip_peers(GossipGraph::random_matching, 32, round, 1));  // seeded
    }
    REQUIRE(workloads::gossip_peers(GossipGraph::random_matching, 32, 0, 1) !=
            workloads::gossip_peers(GossipGraph::random_matching, 32, 1, 1));
    REQUIRE(workloads::gossip_peers(GossipGraph::random_matching, 5, 0, 1)[0].size() <= 1);  // odd: one left out
    // The generator: per round, one send of the fp32 parameters per partner and as many receives; no collective.
    const auto g = generate(
        "{generator: layers, model: resnet50, dp: 32, steps: 4, local_steps: 2, averaging: "
        "gossip, gossip_graph: torus}");
    std::uint64_t sends = 0, recvs = 0, collectives = 0;
    for (const auto& op : g.ops) {
        if (op.kind == OpKind::send) {
            ++sends;
            REQUIRE(op.bytes() == 4 * 25'557'032ULL);
        }
        recvs += op.kind == OpKind::recv;
        collectives += op.kind == OpKind::collective;
    }
    REQUIRE(sends == 32 * 2 * 4);  // 32 ranks x 2 rounds x 4 torus partners
    REQUIRE(recvs == sends);
    REQUIRE(collectives == 0);
    REQUIRE_THROWS_WITH(generate("{generator: layers, averaging: gossip, gossip_graph: star}"),
                        Catch::Matchers::Contains("unknown graph 'star'"));
}

TEST_CASE("a time-varying gossip schedule: round r on the (r mod count)-th graph of the list",
          "[workloads][layers][gossip]") {
    // 16 ranks, 4 rounds on "ring, exponential": rounds 0 and 2 a ring (2 partners), 1 and 3 the exponential graph
    // (4 partners, i + 1, 2, 4, 8).
    const auto g = generate(
        "{generator: layers, model: resnet50, dp: 16, steps: 8, local_steps: 2, averaging: gossip, "
        "gossip_graph: \"ring, exponential\"}");
    std::vector<std::uint64_t> sends_of_rank0;  // partner ranks of rank 0's sends, in order
    std::uint64_t sends = 0;
    for (const auto& op : g.ops) {
        if (op.kind != OpKind::send) continue;
        ++sends;
        if (g.rank_of(op).value == 0) sends_of_rank0.push_back(op.peer().value);
    }
    REQUIRE(sends == 16 * (2 + 4 + 2 + 4));
    std::vector<std::uint64_t> sorted = sends_of_rank0;
    std::sort(sorted.begin(), sorted.end());
    REQUIRE(sorted == std::vector<std::uint64_t>{1, 1, 1, 1, 2, 2, 4, 4, 8, 8, 15, 15});
    REQUIRE_THROWS_WITH(generate("{generator: layers, averaging: gossip, gossip_graph: \"ring,, torus\"}"),
                        Catch::Matchers::Contains("unknown graph '' in \"ring,, torus\""));
}

TEST_CASE("hierarchical local SGD: averages in groups, over all ranks every global_every-th round",
          "[workloads][layers]") {
    // 8 ranks, H = 2, 8 steps: 4 averaging rounds; groups of 4, global every 2nd: rounds 1 and 3 in the group,
    // rounds 2 and 4 over all.
    const auto g = generate(
        "{generator: layers, model: resnet50, dp: 8, steps: 8, local_steps: 2, averaging_group: 4, "
        "global_every: 2}");
    std::map<std::string, std::uint64_t> calls;  // by communicator
    for (const auto& op : g.ops) {
        if (op.kind != OpKind::collective) continue;
        REQUIRE(op.bytes() == 4 * 25'557'032ULL);  // the fp32 parameters
        ++calls[g.comms[op.comm().index()].name];
    }
    REQUIRE(calls == std::map<std::string, std::uint64_t>{{"dp", 8 * 2}, {"dp group 0", 4 * 2}, {"dp group 1", 4 * 2}});
    REQUIRE(g.comms[1].ranks.size() == 4);
    REQUIRE_THROWS_WITH(generate("{generator: layers, dp: 8, local_steps: 2, averaging_group: 3, global_every: 2}"),
                        Catch::Matchers::Contains("groups of 3 do not split dp = 8 ranks"));
    REQUIRE_THROWS_WITH(generate("{generator: layers, dp: 8, averaging_group: 4, global_every: 2}"),
                        Catch::Matchers::Contains("applies to local SGD"));
    REQUIRE_THROWS_WITH(generate("{generator: layers, dp: 8, local_steps: 2, global_every: 2}"),
                        Catch::Matchers::Contains("needs averaging_group"));
}

TEST_CASE("federated rounds: sampled clients train, average among themselves, newcomers receive the model",
          "[workloads][layers]") {
    // 8 ranks, 3 clients per round, 2 local steps, 6 steps: 3 rounds.
    const std::string plan =
        "{generator: layers, model: resnet50, dp: 8, steps: 6, local_steps: 2, clients_per_round: 3, seed: 7}";
    const auto g = generate(plan);
    std::vector<std::vector<std::uint32_t>> clients;  // by round, from the communicators "round q"
    for (const auto& c : g.comms) {
        if (c.name.rfind("round ", 0) != 0) continue;
        std::vector<std::uint32_t> ranks;
        for (const auto r : c.ranks) ranks.push_back(r.value);
        REQUIRE(ranks.size() == 3);
        clients.push_back(ranks);
    }
    REQUIRE(clients.size() == 3);
    std::map<std::uint32_t, std::uint64_t> backward_ops;  // by rank: "backward" kernels, 2 steps x 53 layers a round
    std::uint64_t averages = 0, sends = 0, recvs = 0, expected_newcomers = 0;
    for (const auto& op : g.ops) {
        if (op.kind == OpKind::compute && g.names[op.name].find(" backward ") != std::string::npos &&
            g.names[op.name].find(" norm") == std::string::npos)
            ++backward_ops[g.rank_of(op).value];
        if (op.kind == OpKind::collective) {
            ++averages;
            REQUIRE(op.bytes() == 4 * 25'557'032ULL);
            REQUIRE(g.comms[op.comm().index()].name.rfind("round ", 0) == 0);
        }
        sends += op.kind == OpKind::send;
        recvs += op.kind == OpKind::recv;
    }
    for (std::size_t q = 1; q < clients.size(); ++q)
        for (const std::uint32_t r : clients[q])
            expected_newcomers += std::find(clients[q - 1].begin(), clients[q - 1].end(), r) == clients[q - 1].end();
    for (std::uint32_t r = 0; r < 8; ++r) {
        std::uint64_t rounds = 0;
        for (const auto& c : clients) rounds += std::find(c.begin(), c.end(), r) != c.end();
        const auto it = backward_ops.find(r);
        REQUIRE((it == backward_ops.end() ? 0 : it->second) == rounds * 2 * 54);  // 54 layers with weights
    }
    REQUIRE(averages == 3 * 3);
    REQUIRE(sends == expected_newcomers);
    REQUIRE(recvs == expected_newcomers);
    REQUIRE(expected_newcomers > 0);
    REQUIRE(generate(plan).ops.size() == g.ops.size());  // seeded: the same rounds
    REQUIRE_THROWS_WITH(generate("{generator: layers, dp: 4, clients_per_round: 5}"),
                        Catch::Matchers::Contains("5 clients per round, but dp is 4"));
    REQUIRE_THROWS_WITH(generate("{generator: layers, dp: 4, steps: 3, local_steps: 2, clients_per_round: 2}"),
                        Catch::Matchers::Contains("not a multiple of local_steps"));
}

TEST_CASE("parameter servers: pushes and pulls of each shard, one update per step (sync) or per push (async)",
          "[workloads][layers][ps]") {
    const std::uint64_t params = 25'557'032;
    for (const char* mode : {"sync", "async"}) {
        INFO(mode);
        const auto g = generate(std::string("{generator: layers, model: resnet50, dp: 4, steps: 3, averaging: "
                                            "parameter_server, servers: 2, sparse_fraction: 0.5, ps_mode: ") +
                                mode + "}");
        REQUIRE(g.rank_count == 6);  // 4 workers, then 2 servers
        std::uint64_t pushed = 0, pulled = 0, updates = 0, collectives = 0;
        for (const auto& op : g.ops) {
            const std::string& name = g.names[op.name];
            if (g.rank_of(op).value < 4 && op.kind == OpKind::send) pushed += op.bytes();
            if (g.rank_of(op).value < 4 && op.kind == OpKind::recv) pulled += op.bytes();
            if (g.rank_of(op).value >= 4 && op.kind == OpKind::compute &&
                (name.find("update") != std::string::npos || name.find("apply") != std::string::npos))
                ++updates;
            collectives += op.kind == OpKind::collective;
        }
        // Each worker, each step: half the fp32 gradients pushed (split over the servers), as much pulled back.
        const std::uint64_t half_shard = 4 * params / 2 / 2;
        REQUIRE(pushed == 4 * 3 * 2 * half_shard);
        REQUIRE(pulled == pushed);
        REQUIRE(updates == (std::string(mode) == "sync" ? 2 * 3 : 2 * 3 * 4));
        REQUIRE(collectives == 0);
    }
    // Bounded staleness: step t + 1 of a worker waits for the pulls of step t - s, not those of step t.
    const auto g = generate(
        "{generator: layers, model: resnet50, dp: 2, steps: 4, averaging: parameter_server, ps_mode: ssp, "
        "staleness: 1}");
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const std::string& name = g.names[g.ops[i].name];
        if (g.rank_of(g.ops[i]).value != 0 || name != "step2 forward conv1") continue;
        const auto deps = g.deps(traces::OpId::from_index(i));
        REQUIRE(deps.size() == 1);
        REQUIRE(g.names[g.ops[deps[0].index()].name] == "step0 pull from server 0");
    }
    REQUIRE_THROWS_WITH(generate("{generator: layers, averaging: parameter_server, local_steps: 2}"),
                        Catch::Matchers::Contains("local_steps must be 1"));
}

TEST_CASE("CPU offload: each rank's part of every bucket down, stepped on the host, up and all-gathered",
          "[workloads][layers][offload]") {
    const std::uint64_t params = 138'357'544;  // VGG-16
    const auto g = generate("{generator: layers, model: vgg16, dp: 4, offload: optimizer, host_bandwidth: 50 GB/s}");
    double down = 0, up = 0, host_s = 0, scattered = 0, gathered = 0;
    bool gpu_optimizer_state = false;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const auto& op = g.ops[i];
        if (g.rank_of(op).value != 0) continue;
        if (op.kind == OpKind::memcpy_d2h) down += double(op.bytes());
        if (op.kind == OpKind::memcpy_h2d) up += double(op.bytes());
        if (op.kind == OpKind::delay) host_s += engine::to_seconds(g.durations[i]);
        if (op.kind == OpKind::collective && op.collective == CollectiveKind::reduce_scatter)
            scattered += double(op.bytes());
        if (op.kind == OpKind::collective && op.collective == CollectiveKind::all_gather)
            gathered += double(op.bytes());
        gpu_optimizer_state |= op.kind == OpKind::alloc && op.memory() == traces::MemoryUse::optimizer_state;
    }
    REQUIRE(scattered == Approx(4.0 * params).margin(64));     // every fp32 gradient, bucket by bucket
    REQUIRE(down == Approx(4.0 * params / 4).margin(64));      // this rank's quarter
    REQUIRE(up == Approx(2.0 * params / 4).margin(64));        // fp16 parameters back
    REQUIRE(gathered == Approx(2.0 * params / 4).margin(64));  // each rank's contribution
    REQUIRE(host_s == Approx(params / 4.0 * 24 / 50e9).epsilon(1e-6));
    REQUIRE_FALSE(gpu_optimizer_state);
    REQUIRE_THROWS_WITH(generate("{generator: layers, offload: optimizer, averaging: gossip}"),
                        Catch::Matchers::Contains("averaging: allreduce"));
}
