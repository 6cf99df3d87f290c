// Chakra execution traces from ../shared/data (skipped with a message without it): ASTRA-sim's microbenchmarks,
// the custom send/recv ring all-reduce, ResNet-50 data parallel, and Chakra's own feeder test trace.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "sim/replay/replay.h"
#include "tests/sim/replay_fixture.h"
#include "tests/test_support.h"
#include "traces/formats/chakra/chakra_et.pb.h"
#include "traces/formats/chakra_reader.h"
#include "traces/formats/trace_import.h"
#include "traces/text_file.h"

using namespace clustersim;
using Catch::Matchers::Contains;

namespace {
std::vector<std::string> rank_files(const std::string& dir, const std::string& stem, int ranks) {
    std::vector<std::string> files;
    for (int r = 0; r < ranks; ++r)
        files.push_back(testing::shared_data(dir + "/" + stem + "." + std::to_string(r) + ".et"));
    return files;
}
}  // namespace

TEST_CASE("ASTRA-sim's Chakra microbenchmarks import and replay as one collective per rank", "[traces][chakra]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: Chakra test skipped");
        return;
    }
    for (const char* kind : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}) {
        for (const int n : {4, 8, 16}) {
            INFO(kind << " " << n);
            const auto g = traces::read_chakra(rank_files(std::string("astra-sim/examples/workload/microbenchmarks/") +
                                                              kind + "/" + std::to_string(n) + "npus_1MB",
                                                          kind, n));
            REQUIRE(g.rank_count == static_cast<std::uint32_t>(n));
            REQUIRE(g.ops.size() == static_cast<std::size_t>(n));
            for (const auto& op : g.ops) {
                REQUIRE(op.kind == traces::OpKind::collective);
                REQUIRE(op.bytes() == 1 << 20);
            }
            if (std::string(kind) == "all_reduce") {
                // A ring all-reduce of S moves 2(n-1)S over the network.
                auto options = testing::exact_options();
                options.algorithm = sim::find_collective_algorithm("ring");
                const auto result = sim::replay(g, topo::load_topology("dgx-h100", {"nodes=2"}), options);
                REQUIRE(result.bytes_on_network == 2ULL * (n - 1) * (1 << 20));
            }
        }
    }
}

TEST_CASE("the custom send/recv ring all-reduce and ResNet-50 Chakra traces replay", "[traces][chakra]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: Chakra test skipped");
        return;
    }
    // 8 ranks x 35 nodes of sends, recvs and reduction compute (MSCCL-style); sends are buffered, so the ring
    // runs without deadlock, and every byte sent is received.
    const auto ring = traces::read_chakra(rank_files(
        "astra-sim/examples/system/custom_collectives/custom_ring_allreduce_8npus_1MB", "custom_allreduce", 8));
    REQUIRE(ring.ops.size() == 280);
    std::uint64_t sent = 0;
    for (const auto& op : ring.ops) sent += op.kind == traces::OpKind::send ? op.bytes() : 0;
    const auto result = sim::replay(ring, topo::load_topology("dgx-h100", {}), testing::exact_options());
    REQUIRE(result.bytes_on_network == sent);
    REQUIRE(result.timeline.makespan > engine::Time{0});
    const auto resnet = traces::read_chakra(rank_files("astra-sim/resnet50_dp8", "resnet50", 8));
    REQUIRE(resnet.rank_count == 8);
    REQUIRE(sim::replay(resnet, topo::load_topology("dgx-h100", {}), sim::ReplayOptions{}).timeline.makespan >
            engine::Time{0});
    // Chakra's feeder test trace (3,664 nodes: 3,643 COMP + 21 COMM_COLL), whose ctrl_deps form cycles.
    const auto feeder = traces::read_chakra({testing::shared_data("chakra/et_examples/chakra_feeder_test.0.et.gz")});
    REQUIRE(feeder.ops.size() == 3664);
}

TEST_CASE("a truncated Chakra file fails with the file and the byte", "[traces][chakra][input]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: Chakra test skipped");
        return;
    }
    const std::string whole = traces::read_text_file(testing::shared_data("astra-sim/resnet50_dp8/resnet50.0.et"));
    const auto path = std::filesystem::temp_directory_path() / "clustersim_truncated.0.et";
    std::ofstream(path, std::ios::binary).write(whole.data(), static_cast<std::streamsize>(whole.size() / 2));
    REQUIRE_THROWS_WITH(traces::read_chakra({path.string()}),
                        Contains("clustersim_truncated.0.et: byte") && Contains("(truncated"));
    std::filesystem::remove(path);
}

TEST_CASE("Chakra files are taken in the rank order of their names, not the order given", "[traces][chakra]") {
    if (!testing::shared_data_available()) {
        WARN("../shared/data not found: Chakra rank order test skipped");
        return;
    }
    // A shell glob lists resnet50.10.et before resnet50.2.et; here the 8 files come reversed.
    auto files = rank_files("astra-sim/resnet50_dp8", "resnet50", 8);
    const auto in_order = traces::read_chakra(files);
    std::reverse(files.begin(), files.end());
    const auto reversed = traces::read_chakra(files);
    REQUIRE(reversed.source == in_order.source);  // rank 0 is resnet50.0.et either way
    REQUIRE(reversed.source.find("resnet50.0.et and 7 more") != std::string::npos);
    REQUIRE(reversed.ops == in_order.ops);
}

TEST_CASE("an empty .et file and JSON execution traces are refused, saying what they are", "[traces][chakra][input]") {
    using Catch::Matchers::Contains;
    const auto write = testing::write_temp_file;
    // A GlobalMetadata (version "0.0.4") and no node.
    const auto empty = write("clustersim_empty.0.et", std::string("\x07\x0a\x05"
                                                                  "0.0.4",
                                                                  8));
    REQUIRE_THROWS_WITH(traces::import_traces({empty}, {}),
                        Contains("clustersim_empty.0.et: no Chakra nodes after the metadata"));
    const auto pytorch = write("clustersim_et.json", "{\"schema\": \"1.0.1\", \"pid\": 1, \"nodes\": []}");
    REQUIRE_THROWS_WITH(traces::import_traces({pytorch}, {}), Contains("this is a PyTorch execution trace"));
    const auto chakra_json = write("clustersim_chakra.json", "{\n  \"workload_graph\": []\n}");
    REQUIRE_THROWS_WITH(traces::import_traces({chakra_json}, {}), Contains("this is a Chakra trace in JSON form"));
}

namespace {
/// A one-node Chakra file: the metadata, then `node`, each with its varint length.
std::string write_one_node(const char* name, const chakra::Node& node) {
    std::string bytes;
    const auto append = [&](const google::protobuf::Message& m) {
        const std::string body = m.SerializeAsString();
        std::uint64_t n = body.size();
        do {
            bytes.push_back(static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0)));
            n >>= 7;
        } while (n > 0);
        bytes += body;
    };
    chakra::GlobalMetadata meta;
    meta.set_version("0.0.4");
    append(meta);
    append(node);
    return testing::write_temp_file(name, bytes);
}
}  // namespace

TEST_CASE("Chakra numbers beyond what a run represents are located errors, not wrapped values",
          "[traces][chakra][input]") {
    chakra::Node comp;
    comp.set_id(3);
    comp.set_name("gemm");
    comp.set_type(chakra::COMP_NODE);
    comp.set_duration_micros(10'000'000'000'000ULL);  // 1e13 us: wrapped to a 1 us iteration before
    REQUIRE_THROWS_WITH(
        traces::read_chakra({write_one_node("clustersim_huge.0.et", comp)}),
        Contains("clustersim_huge.0.et: node 3 'gemm': duration_micros 10000000000000 is out of range"));

    chakra::Node coll;
    coll.set_id(4);
    coll.set_name("ar");
    coll.set_type(chakra::COMM_COLL_NODE);
    auto* type = coll.add_attr();
    type->set_name("comm_type");
    type->set_int64_val(chakra::ALL_REDUCE);
    auto* size = coll.add_attr();
    size->set_name("comm_size");
    size->set_uint64_val(UINT64_MAX);  // 2^64-1 bytes: became a negative size clamped to 0 before
    REQUIRE_THROWS_WITH(traces::read_chakra({write_one_node("clustersim_size.0.et", coll)}),
                        Contains("node 4 'ar': attribute 'comm_size' 18446744073709551615 is out of range"));
    size->set_double_val(1e30);
    REQUIRE_THROWS_WITH(traces::read_chakra({write_one_node("clustersim_size.0.et", coll)}),
                        Contains("attribute 'comm_size' 1e+30 is out of range"));
    size->set_int64_val(-8);
    REQUIRE_THROWS_WITH(traces::read_chakra({write_one_node("clustersim_size.0.et", coll)}),
                        Contains("node 4 'ar': comm_size -8 is out of range (expected 0 to 2^48 - 2 bytes)"));
    size->set_int64_val(1 << 20);
    const auto g = traces::read_chakra({write_one_node("clustersim_size.0.et", coll)});
    REQUIRE(g.ops.size() == 1);
    REQUIRE(g.ops[0].bytes() == 1u << 20);
}
