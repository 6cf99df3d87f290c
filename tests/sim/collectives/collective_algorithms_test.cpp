// Every registered collective algorithm: bytes conserved, times against closed forms on a switch (one DGX-H100
// node: every GPU has its own 450 GB/s NVLink to the NVSwitch, 150 ns per hop), dependencies respected.
#include <cstdlib>
#include <set>

#include <catch2/catch.hpp>

#include "sim/collective_sweep.h"
#include "sim/collectives/collective_algorithm.h"
#include "tests/sim/replay_fixture.h"

using namespace clustersim;
using namespace std::chrono_literals;
using engine::Time;
using traces::CollectiveKind;

namespace {

sim::ReplayResult run_one(const topo::Cluster& cluster, const std::string& algorithm, CollectiveKind kind,
                          std::uint64_t bytes, std::uint32_t ranks, std::uint32_t chunks = 0) {
    testing::GraphBuilder b(ranks);
    std::vector<std::uint32_t> members;
    for (std::uint32_t r = 0; r < ranks; ++r) members.push_back(r);
    for (std::uint32_t r = 0; r < ranks; ++r) b.collective(r, "comm", "world", members, bytes, kind);
    auto options = testing::exact_options();
    options.algorithm = sim::find_collective_algorithm(algorithm);
    options.tree_chunks = chunks;
    REQUIRE(options.algorithm.has_value());
    return sim::replay(b.g, cluster, options);
}

/// Bus bandwidth of a 1 GiB ring all-reduce over every GPU of `cluster` (default options: NCCL's protocols, 8
/// channels): 2(n-1)/n x S / time.
double ring_all_reduce_busbw(const topo::Cluster& cluster) {
    const auto n = static_cast<std::uint32_t>(cluster.gpus().size());
    testing::GraphBuilder b(n);
    std::vector<std::uint32_t> members;
    for (std::uint32_t m = 0; m < n; ++m) members.push_back(m);
    for (std::uint32_t m = 0; m < n; ++m) b.collective(m, "comm", "world", members, 1ULL << 30);
    sim::ReplayOptions options;
    options.algorithm = sim::find_collective_algorithm("ring");
    const auto result = sim::replay(b.g, cluster, options);
    return 2.0 * (n - 1) / n * static_cast<double>(1ULL << 30) / engine::to_seconds(result.timeline.makespan);
}

/// |a - b| <= 2 ps: shares like 450/7 GB/s are not exact in binary.
bool close(Time a, Time b) { return std::llabs(a.count() - b.count()) <= 2; }

}  // namespace

TEST_CASE("every algorithm moves exactly the bytes its collective must move", "[sim][collectives]") {
    // n members, buffer S: all-reduce moves 2(n-1)S whatever the algorithm (ring, direct, halving-doubling, the
    // double tree: two trees x (n-1) edges x S/2 x up and down; hierarchical: 2N(ppn-1)S + 2(N-1)S); reduce-
    // scatter and all-to-all (n-1)S; all-gather of c per member (n-1)nc; broadcast and reduce (n-1)S.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    const std::uint32_t n = 16;
    const std::uint64_t s = 1'600'016;  // not a multiple of n: remainders must not be lost
    struct Case {
        CollectiveKind kind;
        std::uint64_t expected;
    };
    const Case cases[] = {{CollectiveKind::all_reduce, 2 * (n - 1) * s}, {CollectiveKind::reduce_scatter, (n - 1) * s},
                          {CollectiveKind::all_gather, (n - 1) * n * s}, {CollectiveKind::all_to_all, (n - 1) * s},
                          {CollectiveKind::broadcast, (n - 1) * s},      {CollectiveKind::reduce, (n - 1) * s}};
    for (const auto& entry : sim::collective_algorithms()) {
        for (const Case& c : cases) {
            INFO(entry.name << " " << traces::collective_kind_name(c.kind));
            const auto result = run_one(cluster, entry.name, c.kind, s, n);
            // PXN (all-to-all's default, so also what the algorithms without an all-to-all form fall back to)
            // forwards remote data through the rail peer: (nodes-1)(ppn-1) S more over NVLink (2 nodes of 8).
            const std::uint64_t forwarded = entry.name != "direct" && c.kind == CollectiveKind::all_to_all ? 7 * s : 0;
            REQUIRE(result.bytes_on_network == c.expected + forwarded);
        }
    }
}

TEST_CASE("ring, halving-doubling and direct all-reduce match their closed forms on a switch", "[sim][collectives]") {
    // One DGX-H100 node: n = 8, B = 450 GB/s per GPU each way, alpha = 2 x 150 ns = 0.3 us. S = 36 MB, so
    // S/8 = 4.5 MB takes 10 us.
    const auto node = topo::load_topology("dgx-h100", {"nodes=1"});
    const std::uint64_t s = 36'000'000;
    // Ring: 2(n-1)(alpha + S/(nB)) = 14 x 10.3 us.
    REQUIRE(run_one(node, "ring", CollectiveKind::all_reduce, s, 8).timeline.makespan == Time{144'200'000});
    // Reduce-scatter and all-gather (contribution S/8): (n-1)(alpha + S/(nB)) = 7 x 10.3 us.
    REQUIRE(run_one(node, "ring", CollectiveKind::reduce_scatter, s, 8).timeline.makespan == Time{72'100'000});
    REQUIRE(run_one(node, "ring", CollectiveKind::all_gather, s / 8, 8).timeline.makespan == Time{72'100'000});
    // Halving-doubling: 2 log2(n) alpha + 2(n-1)/n S/B: steps of S/2, S/4, S/8 and back = 6 x 0.3 + 2 x 70 us.
    REQUIRE(run_one(node, "halving_doubling", CollectiveKind::all_reduce, s, 8).timeline.makespan == Time{141'800'000});
    // Direct: each GPU's link carries 7 flows of S/8 at once, in both phases: 2 (alpha + 7 S / (8B)).
    REQUIRE(close(run_one(node, "direct", CollectiveKind::all_reduce, s, 8).timeline.makespan, Time{140'600'000}));
}

TEST_CASE("the double tree pipelines chunks up and down two complementary chains in a node", "[sim][collectives]") {
    // In one node each tree is a chain of 8 (the second reversed). Lower bound: a byte must go up and down the
    // chain, 2 x 7 hops of 0.3 us, and every GPU's link carries both trees' halves: S/B each way. The chunked
    // pipeline lands between that bound and the unpipelined 2 x 7 x (alpha + S/(2B)).
    const auto node = topo::load_topology("dgx-h100", {"nodes=1"});
    const std::uint64_t s = 36'000'000;
    const Time t = run_one(node, "double_tree", CollectiveKind::all_reduce, s, 8).timeline.makespan;
    const Time lower = Time{14 * 300'000} + Time{80'000'000};
    const Time unpipelined = Time{14 * (300'000 + 40'000'000)};
    REQUIRE(t > lower);
    REQUIRE(t < unpipelined);
}

TEST_CASE("hierarchical all-reduce beats a flat ring across nodes at large sizes", "[sim][collectives]") {
    // 4 DGX-H100 nodes, one channel: the flat ring crosses nodes through one NIC (50 GB/s); the hierarchical one
    // sends only 1/8 of the buffer per rail across nodes, on all eight rails, and does the rest over NVLink.
    // (With NCCL's usual 8+ channels the flat ring uses all eight NICs too, and wins: see docs/models.md.)
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=4"});
    const std::uint64_t s = 1ULL << 30;
    const Time ring = run_one(cluster, "ring", CollectiveKind::all_reduce, s, 32).timeline.makespan;
    const Time hierarchical = run_one(cluster, "hierarchical", CollectiveKind::all_reduce, s, 32).timeline.makespan;
    REQUIRE(hierarchical.count() * 3 < ring.count());
}

TEST_CASE("with 8 channels, ring and double tree cross nodes through all eight NICs", "[sim][collectives]") {
    // 2 DGX-H100 nodes, 16 ranks, 1 GiB, NIC-bound: one channel's ring crosses nodes through one 50 GB/s NIC per
    // direction and its tree pair through two; eight channels each have their own rail-aligned NIC, so the run
    // is close to 8x (ring) and 4x (tree) faster, with the same bytes.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    const std::uint64_t s = 1ULL << 30;
    for (const std::string algorithm : {"ring", "double_tree"}) {
        INFO(algorithm);
        auto run = [&](std::uint32_t channels) {
            testing::GraphBuilder b(16);
            std::vector<std::uint32_t> members;
            for (std::uint32_t r = 0; r < 16; ++r) members.push_back(r);
            for (std::uint32_t r = 0; r < 16; ++r) b.collective(r, "comm", "world", members, s);
            auto options = testing::exact_options();
            options.algorithm = sim::find_collective_algorithm(algorithm);
            options.channels = channels;
            options.tree_chunks = 8;  // the same pipelining whatever the channels: only the NICs differ
            return sim::replay(b.g, cluster, options);
        };
        const auto one = run(1);
        const auto eight = run(8);
        REQUIRE(eight.bytes_on_network == one.bytes_on_network);
        REQUIRE(eight.bytes_on_network == 2ULL * 15 * s);
        const double speedup = static_cast<double>(one.timeline.makespan.count()) / eight.timeline.makespan.count();
        REQUIRE(speedup > (algorithm == "ring" ? 6.0 : 3.0));
    }
}

TEST_CASE("per-channel rings and trees cross nodes rail-aligned, through every local GPU", "[sim][collectives]") {
    // 2 switched nodes of 4 members (member m is local GPU m % 4 of node m / 4), 4 channels: every transfer that
    // leaves a node goes to the same local index on the next node (one rail), and the crossings of all channels
    // together use every local index. Without a switch (a mesh) the plan keeps one ring and never spreads.
    for (const std::string name : {"ring", "double_tree"}) {
        INFO(name);
        const auto algorithm = sim::collective_algorithms()[*sim::find_collective_algorithm(name)].make();
        sim::PlanRequest r;
        r.members = 8;
        r.bytes = 1 << 20;
        r.channels = 4;
        r.switched_nodes = true;
        for (std::uint32_t m = 0; m < r.members; ++m) r.node_of.push_back(m / 4);
        const auto plan = algorithm->plan(r);
        REQUIRE(plan.channels_planned);
        std::set<std::uint32_t> rails;
        std::uint64_t bytes = 0;
        const auto listed = plan.expanded();
        for (const auto& t : listed.transfers()) {
            bytes += t.bytes;
            if (r.node_of[t.src] == r.node_of[t.dst]) continue;
            REQUIRE(t.src % 4 == t.dst % 4);
            rails.insert(t.src % 4);
        }
        REQUIRE(rails == std::set<std::uint32_t>{0, 1, 2, 3});
        REQUIRE(bytes == 2ULL * (r.members - 1) * r.bytes);
        r.switched_nodes = false;
        const auto mesh = algorithm->plan(r);
        REQUIRE_FALSE(mesh.channels_planned);
        std::set<std::uint32_t> mesh_rails;
        const auto mesh_listed = mesh.expanded();
        for (const auto& t : mesh_listed.transfers())
            if (r.node_of[t.src] != r.node_of[t.dst]) mesh_rails.insert(t.src % 4);
        REQUIRE(mesh_rails.size() <= 2);
    }
}

TEST_CASE("with an odd number of nodes the ring's wrap-around hop is relayed onto the rail (PXN)",
          "[sim][collectives]") {
    // 3 switched nodes of 4 members, 4 channels: the even/odd rotation leaves the hop from node 2 back to node 0
    // on another rail; it goes over NVLink to node 2's GPU on node 0's entry rail, which sends on. Every crossing
    // is rail-aligned; each ring step has one more (intra-node) transfer.
    const auto ring = sim::collective_algorithms()[*sim::find_collective_algorithm("ring")].make();
    sim::PlanRequest r;
    r.kind = CollectiveKind::all_gather;
    r.members = 12;
    r.bytes = 1 << 20;
    r.channels = 4;
    r.switched_nodes = true;
    for (std::uint32_t m = 0; m < r.members; ++m) r.node_of.push_back(m / 4);
    const auto plan = ring->plan(r);
    std::size_t crossings = 0;
    const auto listed = plan.expanded();
    for (const auto& t : listed.transfers()) {
        if (r.node_of[t.src] == r.node_of[t.dst]) continue;
        REQUIRE(t.src % 4 == t.dst % 4);
        ++crossings;
    }
    // Per channel and step: 3 crossings of 12 transfers plus the relay's NVLink hop; 11 steps, 4 channels.
    REQUIRE(crossings == 4 * 11 * 3);
    REQUIRE(plan.size() == 4 * 11 * 13);
    // On 3 DGX-H100 nodes the 1 GiB all-reduce now crosses on rails only: above 340 GB/s bus bandwidth (it was
    // 190 GB/s with the cross-rail hop through a spine; 383 GB/s on 2 nodes).
    const double busbw = ring_all_reduce_busbw(topo::load_topology("dgx-h100", {"nodes=3"}));
    REQUIRE(busbw > 340e9);
    REQUIRE(busbw < 400e9);  // the node's 8 NICs
}

TEST_CASE("faster NICs help only once the PCIe path carries them", "[sim][collectives]") {
    // 2 DGX-H100 nodes with 800 Gb/s NICs: GPUDirect traffic crosses each GPU's PCIe x16 link, Gen5 (64 GB/s at
    // NCCL's 0.75 efficiency: 8 x 48 = 384 GB/s for the node) caps the 1 GiB all-reduce; Gen6 lifts the cap.
    const double gen5 = ring_all_reduce_busbw(topo::load_topology("dgx-h100", {"nodes=2", "nic_bandwidth=800 Gb/s"}));
    const double gen6 =
        ring_all_reduce_busbw(topo::load_topology("dgx-h100", {"nodes=2", "nic_bandwidth=800 Gb/s", "pcie_gen=6"}));
    REQUIRE(gen5 < 384e9);
    REQUIRE(gen6 > 1.05 * gen5);
    REQUIRE_THROWS_WITH(topo::load_topology("dgx-h100", {"pcie_gen=6", "pcie_bandwidth=100 GB/s"}),
                        Catch::Matchers::Contains("give pcie_gen or pcie_bandwidth, not both"));
    REQUIRE_THROWS_WITH(topo::load_topology("dgx-h100", {"pcie_gen=7"}),
                        Catch::Matchers::Contains("expected 3, 4, 5 or 6"));
}

TEST_CASE("across DGX-1 nodes each NIC carries its own ring, NVLink-only inside", "[sim][collectives]") {
    // Two DGX-1 nodes (hybrid cube-mesh, 4 EDR NICs of 12.5 GB/s, one per GPU pair): a ring per NIC enters and
    // leaves each node through that NIC's two GPUs and uses direct NVLink links in between. A 1 GiB all-reduce
    // reaches about 40 GB/s bus bandwidth: near the 4 NICs' 48 GB/s at 96% (it was 12 GB/s through one NIC).
    const double busbw = ring_all_reduce_busbw(topo::load_topology("dgx1-v100", {"nodes=2"}));
    REQUIRE(busbw > 35e9);
    REQUIRE(busbw < 48e9);
}

TEST_CASE("a communicator's rings per NIC are found once, however many calls it makes", "[sim][collectives]") {
    // 300 identical all-reduces one after the other on 2 DGX-1 nodes move 300 times the flows of one: every call
    // is planned with the same rings per NIC (cached per communicator; past 255 calls they must not be searched
    // and appended again).
    const auto cluster = topo::load_topology("dgx1-v100", {"nodes=2"});
    auto flows = [&](int calls) {
        testing::GraphBuilder b(16);
        std::vector<std::uint32_t> members;
        for (std::uint32_t m = 0; m < 16; ++m) members.push_back(m);
        for (int call = 0; call < calls; ++call)
            for (std::uint32_t m = 0; m < 16; ++m) b.collective(m, "comm", "world", members, 1 << 20);
        sim::ReplayOptions options;
        options.algorithm = sim::find_collective_algorithm("ring");
        return sim::replay(b.g, cluster, options).flows;
    };
    REQUIRE(flows(300) == 300 * flows(1));
}

TEST_CASE("two all-reduces sharing a NIC each get about half of it", "[sim][collectives]") {
    // Ranks 0 and 8 (GPU 0 of each of two nodes) all-reduce 256 MB twice on two communicators at once: both go
    // through NIC 0 of each node, so each takes about twice as long as alone.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    auto run = [&](int copies) {
        testing::GraphBuilder b(16);
        for (int k = 0; k < copies; ++k) {
            for (const std::uint32_t r : {0U, 8U})
                b.collective(r, "comm" + std::to_string(k), "pair" + std::to_string(k), {0, 8}, 256'000'000);
        }
        for (std::uint32_t r = 0; r < 16; ++r) {
            if (r != 0 && r != 8) b.compute(r, "idle", Time{1});
        }
        return sim::replay(b.g, cluster, testing::exact_options()).timeline.makespan;
    };
    const double ratio = static_cast<double>(run(2).count()) / static_cast<double>(run(1).count());
    REQUIRE(ratio == Approx(2.0).epsilon(0.02));
}

TEST_CASE("NCCL's tuner picks tree/LL for small all-reduces and ring/Simple for large ones",
          "[sim][collectives][nccl]") {
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    sim::CollectiveSweepOptions options;
    options.min_bytes = 8;
    options.max_bytes = 1ULL << 30;
    options.factor = 1 << 27;  // 8 B and 1 GiB
    const auto rows = sim::run_collective_sweep(cluster, options);
    REQUIRE(rows.size() == 2);
    REQUIRE(rows[0].algorithm == "double_tree");
    REQUIRE(rows[0].protocol == "LL");
    REQUIRE(rows[1].algorithm == "ring");
    REQUIRE(rows[1].protocol == "Simple");
    // Bus bandwidth never exceeds the bottleneck, a node's eight 400 Gb/s NICs (each of the 8 channels' rings
    // crosses nodes through its own GPU and NIC), and approaches it at 1 GiB (NIC efficiency 0.96).
    REQUIRE(rows[1].busbw_gbps <= 8 * 50.0);
    REQUIRE(rows[1].busbw_gbps > 0.9 * 0.96 * 8 * 50.0);
}

TEST_CASE("a sweep on several threads gives the rows of one thread, to the picosecond and in size order",
          "[sim][collectives]") {
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    sim::CollectiveSweepOptions options;
    options.min_bytes = 1024;
    options.max_bytes = 1ULL << 28;
    options.factor = 16;  // 1 KiB to 64 MiB: 5 sizes, NCCL's pick and its alternatives simulated for each
    const auto one = sim::run_collective_sweep(cluster, options);
    options.threads = 3;
    std::vector<std::uint64_t> emitted;
    const auto sink = [](void* context, const sim::CollectiveRow& row) {
        static_cast<std::vector<std::uint64_t>*>(context)->push_back(row.bytes);
    };
    const auto three = sim::run_collective_sweep(cluster, options, sim::RowSink{sink, &emitted});
    REQUIRE(one.size() == 5);
    REQUIRE(three.size() == one.size());
    for (std::size_t i = 0; i < one.size(); ++i) {
        REQUIRE(emitted[i] == one[i].bytes);
        REQUIRE(three[i].bytes == one[i].bytes);
        REQUIRE(three[i].time == one[i].time);
        REQUIRE(three[i].algorithm == one[i].algorithm);
        REQUIRE(three[i].protocol == one[i].protocol);
        REQUIRE(three[i].fastest_time == one[i].fastest_time);
        REQUIRE(three[i].fastest_algorithm == one[i].fastest_algorithm);
    }
    options.threads = 1;
    const auto concurrent_one = sim::run_concurrent_sweep(cluster, options);
    options.threads = 4;
    const auto concurrent_four = sim::run_concurrent_sweep(cluster, options);
    REQUIRE(concurrent_four.size() == concurrent_one.size());
    for (std::size_t i = 0; i < concurrent_one.size(); ++i) {
        REQUIRE(concurrent_four[i].bytes == concurrent_one[i].bytes);
        REQUIRE(concurrent_four[i].tp_together == concurrent_one[i].tp_together);
        REQUIRE(concurrent_four[i].dp_together == concurrent_one[i].dp_together);
        REQUIRE(concurrent_four[i].dp_alone == concurrent_one[i].dp_alone);
    }
}

TEST_CASE("NCCL's latency model adds base and per-hop latencies as tuning.cc does", "[sim][collectives][nccl]") {
    // 16 ranks on 2 Hopper nodes with NVLink. Ring LL all-reduce: base 6.6 + (30 - 2) steps x max(0.6, 1.0 net
    // overhead) + 2 inter-node steps x 2.7 = 40.0 us. Tree LL: 6.8 + 2 x ((8-1) x 0.6 + log2(2) x 5.0) = 25.2 us.
    sim::NcclTopologyInfo info;
    info.ranks = 16;
    info.nodes = 2;
    info.intra_bw_gbps = 450;
    info.inter_bw_gbps = 50;
    const auto ring =
        sim::nccl_estimate(CollectiveKind::all_reduce, 0, sim::NcclAlgorithm::ring, sim::NcclProtocol::ll, info);
    const auto tree =
        sim::nccl_estimate(CollectiveKind::all_reduce, 0, sim::NcclAlgorithm::tree, sim::NcclProtocol::ll, info);
    REQUIRE(ring->latency_us == Approx(40.0));
    REQUIRE(tree->latency_us == Approx(25.2));
    REQUIRE(!sim::nccl_estimate(CollectiveKind::all_gather, 0, sim::NcclAlgorithm::tree, sim::NcclProtocol::ll, info));
}

TEST_CASE("PXN all-to-all keeps cross-node traffic on the rails", "[sim][collectives]") {
    // 2 DGX-H100 nodes, rail-optimized: with PXN every cross-node transfer goes between GPUs of the same local
    // index (same rail, no spine); direct all-to-all sends cross-rail traffic through the spines.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    for (const char* algorithm : {"pxn", "direct"}) {
        testing::GraphBuilder b(16);
        std::vector<std::uint32_t> members;
        for (std::uint32_t r = 0; r < 16; ++r) members.push_back(r);
        for (std::uint32_t r = 0; r < 16; ++r)
            b.collective(r, "comm", "world", members, 16'000'000, CollectiveKind::all_to_all);
        auto options = testing::exact_options();
        options.algorithm = sim::find_collective_algorithm(algorithm);
        const auto result = sim::replay(b.g, cluster, options);
        double spine_bytes = 0;
        for (const auto& c : result.timeline.counters) {
            if (c.name.find("spine") == std::string::npos) continue;
            spine_bytes += c.bytes;
        }
        INFO(algorithm);
        if (std::string(algorithm) == "pxn")
            REQUIRE(spine_bytes == 0);
        else
            REQUIRE(spine_bytes > 0);
    }
}

TEST_CASE("NVLS all-reduce sends each buffer up to the NVSwitch once and down once, pipelined", "[sim][collectives]") {
    // One DGX-H100 node, S = 36 MB in 8 chunks of 4.5 MB; each GPU link is 450 GB/s and 150 ns each way. The
    // ups of all GPUs run back to back (S/B = 80 us); chunk c comes down once every GPU's chunk c is up; the
    // last chunk comes down after the last up: S/B + S/(8B) + 2 x 150 ns = 90.3 us. A ring needs 144.2 us.
    const auto node = topo::load_topology("dgx-h100", {"nodes=1"});
    REQUIRE(run_one(node, "nvls", CollectiveKind::all_reduce, 36'000'000, 8, 8).timeline.makespan == Time{90'300'000});
    // Chunked as NCCL does (one 512 KiB Simple step on the one channel): C = 69 chunks, S/B + S/(69 B) + 0.3 us
    // = 81.4594 us (within 100 ps: each chunk's size rounds to whole bytes).
    const auto nccl_chunked = run_one(node, "nvls", CollectiveKind::all_reduce, 36'000'000, 8).timeline.makespan;
    REQUIRE(std::abs(nccl_chunked.count() - 81'459'420) <= 100);
    // Without an NVSwitch (a PCIe box) NVLS has no form: the ring runs instead.
    const auto box = topo::load_topology("pcie-box", {"nodes=1"});
    const auto fallback = run_one(box, "nvls", CollectiveKind::all_reduce, 36'000'000, 8);
    REQUIRE(fallback.collectives.front().algorithm == *sim::find_collective_algorithm("ring"));
}

TEST_CASE("NCCL's tuner picks NVLS for large all-reduces inside an H100 node", "[sim][collectives][nccl]") {
    const auto node = topo::load_topology("dgx-h100", {"nodes=1"});
    sim::CollectiveSweepOptions options;
    options.min_bytes = options.max_bytes = 1ULL << 30;
    const auto rows = sim::run_collective_sweep(node, options);
    REQUIRE(rows[0].algorithm == "nvls");
    // NVLS's bus bandwidth beats the ring's 2(n-1)/n bound of one NVLink (450 GB/s x 0.82 efficiency = 369).
    REQUIRE(rows[0].busbw_gbps > 450.0);
}

TEST_CASE("the ring on a DGX-1 follows its NVLink cube-mesh", "[sim][collectives]") {
    // Member order 0..7 would cross PCIe and QPI (3-4 and 7-0 have no NVLink). The greedy widest-path search
    // finds 0-3-2-1-5-6-7-4, every hop a double NVLink (50 GB/s, 150 ns). 64 MB all-reduce: 14 steps of
    // 150 ns + 8 MB / 50 GB/s = 160.15 us: 2,242.1 us.
    const auto dgx1 = topo::load_topology("dgx1-v100", {});
    REQUIRE(run_one(dgx1, "ring", CollectiveKind::all_reduce, 64'000'000, 8).timeline.makespan == Time{2'242'100'000});
}

TEST_CASE("NCCL's tuner reads NVLink bandwidth from the topology, not the GPU catalogue", "[sim][collectives]") {
    // One 64 MiB all-reduce on an H100 node, and on the same node with an H800-like 200 GB/s of NVLink per GPU.
    auto predicted = [](const std::vector<std::string>& preset) {
        testing::GraphBuilder b(8);
        std::vector<std::uint32_t> members{0, 1, 2, 3, 4, 5, 6, 7};
        for (std::uint32_t r = 0; r < 8; ++r) b.collective(r, "nccl", "world", members, 64u << 20);
        const auto cluster = topo::load_topology("dgx-h100", preset);
        const auto result = sim::replay(b.g, cluster, sim::ReplayOptions{});
        REQUIRE(result.collectives.size() == 1);
        return result.collectives.front().nccl_predicted_us;
    };
    const double h100 = predicted({}), h800 = predicted({"nvlink_bandwidth=200 GB/s"});
    REQUIRE(h800 > 1.8 * h100);  // bandwidth-bound: about 450 / 200 times longer
}

TEST_CASE("broadcast pipelines in NCCL's protocol steps, not a fixed 8 chunks", "[sim][collectives]") {
    // One DGX-H100 node, 1 GiB broadcast down the 7-hop chain, 1 channel, no protocol costs: NCCL's Simple step
    // of 512 KiB gives 2,048 chunks, capped at 256 of 4 MiB; a chain of h hops with k chunks of c bytes takes
    // (k + h - 1) c / B + h alpha (B = 450 GB/s, alpha = 300 ns through the switch): 2,444.117 us, 97.6% of the
    // bound S/B. Eight fixed chunks took (8 + 6) x 134,217,728 / B + 2.1 us = 4,177.763 us: 43% slower.
    const auto node = topo::load_topology("dgx-h100", {"nodes=1"});
    const double s = 1ULL << 30, b = 450e9;
    auto expected_ps = [&](double k) { return ((k + 6) * (s / k) / b + 7 * 300e-9) * 1e12; };
    const auto nccl = run_one(node, "ring", CollectiveKind::broadcast, 1ULL << 30, 8).timeline.makespan;
    REQUIRE(std::abs(static_cast<double>(nccl.count()) - expected_ps(256)) <= 1000);
    const auto fixed = run_one(node, "ring", CollectiveKind::broadcast, 1ULL << 30, 8, 8).timeline.makespan;
    REQUIRE(std::abs(static_cast<double>(fixed.count()) - expected_ps(8)) <= 1000);
}

TEST_CASE("NVLink efficiency follows the GPU's architecture", "[sim][collectives]") {
    // One node, 1 GiB ring all-reduce, NVLink-bound: NCCL's per-link figures are 20.0 of 25 GB/s on A100 (0.80)
    // and 20.6 on H100 (0.824), so the A100 node reaches at most 0.80 x 300 = 240 GB/s busbw and the H100 node
    // 0.824 x 450 = 370.8 GB/s; per-step latencies take a little off each.
    const double a100 = ring_all_reduce_busbw(topo::load_topology("dgx-a100", {"nodes=1"})) / 1e9;
    const double h100 = ring_all_reduce_busbw(topo::load_topology("dgx-h100", {"nodes=1"})) / 1e9;
    REQUIRE(a100 < 240.0);
    REQUIRE(a100 > 0.97 * 240.0);
    REQUIRE(h100 < 370.8);
    REQUIRE(h100 > 0.97 * 370.8);
}
