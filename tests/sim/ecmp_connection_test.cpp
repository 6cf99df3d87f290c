// ECMP by connection (sim/replay/replay_transfer_flows.cpp, replay_communication.cpp): a communicator's transfers
// between two GPUs keep one path per channel for the whole run, as NCCL's connections keep their queue pairs'
// paths, and a transfer's channels spread over the equal-cost paths.
#include <algorithm>
#include <utility>

#include <catch2/catch.hpp>

#include "tests/sim/replay_fixture.h"

using namespace clustersim;

namespace {

// Two DGX-H100 nodes on leaves of their own, joined through 4 spines: rank 0 (node 0) and rank 8 (node 1) are on
// rail 0, and every path between them crosses one of the 4 spines.
topo::Cluster two_leaves() { return topo::load_topology("dgx-h100", {"nodes=2", "nodes_per_leaf=1", "spines=4"}); }

// Bytes each uplink of leaf0.rail0 (to the spines) carried, by spine.
std::vector<double> uplink_bytes(const sim::ReplayResult& r) {
    std::vector<double> bytes(4, 0.0);
    for (const auto& c : r.timeline.counters) {
        for (int s = 0; s < 4; ++s) {
            if (c.name == "leaf0.rail0 -> spine" + std::to_string(s)) bytes[static_cast<std::size_t>(s)] = c.bytes;
        }
    }
    return bytes;
}

// `calls` all-reduces of 64 MiB, back to back, between rank 0 and rank 8.
traces::OpGraph all_reduces(int calls) {
    testing::GraphBuilder b(16);
    std::vector<traces::OpId> last0, last8;
    for (int k = 0; k < calls; ++k) {
        last0 = {b.collective(0, "c", "dp", {0, 8}, 64 << 20, traces::CollectiveKind::all_reduce, last0)};
        last8 = {b.collective(8, "c", "dp", {0, 8}, 64 << 20, traces::CollectiveKind::all_reduce, last8)};
    }
    return std::move(b.g);
}

// Exact replay options with NCCL's ring and `channels` channels.
sim::ReplayOptions ring_options(std::uint32_t channels) {
    auto options = testing::exact_options();
    options.channels = channels;
    options.algorithm = sim::find_collective_algorithm("ring");
    return options;
}

// Each spine's bytes are `calls` times one call's.
void require_scaled(const std::vector<double>& bytes, const std::vector<double>& one, int calls) {
    for (std::size_t s = 0; s < bytes.size(); ++s) REQUIRE(bytes[s] == Approx(calls * one[s]).epsilon(1e-12));
}

std::size_t used(const std::vector<double>& bytes) {
    return static_cast<std::size_t>(std::count_if(bytes.begin(), bytes.end(), [](double b) { return b > 0; }));
}

}  // namespace

TEST_CASE("a rank's sends to a peer keep one path across the spines", "[sim][network]") {
    const auto cluster = two_leaves();
    for (const int sends : {1, 6}) {
        testing::GraphBuilder b(16);
        std::vector<traces::OpId> after_send, after_recv;
        for (int k = 0; k < sends; ++k) {
            after_send = {b.p2p(traces::OpKind::send, 0, 8, "s", 1 << 20, after_send)};
            after_recv = {b.p2p(traces::OpKind::recv, 8, 0, "r", 1 << 20, after_recv)};
        }
        const auto r = sim::replay(b.g, cluster, testing::exact_options());
        const auto bytes = uplink_bytes(r);
        // Per send the path would be drawn again: six sends would spread over several spines.
        REQUIRE(used(bytes) == 1);
        REQUIRE(*std::max_element(bytes.begin(), bytes.end()) == Approx(sends * double{1 << 20}).epsilon(1e-12));
    }
}

TEST_CASE("a communicator's channels spread over the spines and keep their paths call after call", "[sim][network]") {
    const auto cluster = two_leaves();
    const auto options = ring_options(2);
    std::vector<double> one;
    for (const int calls : {1, 5}) {
        const auto r = sim::replay(all_reduces(calls), cluster, options);
        const auto bytes = uplink_bytes(r);
        REQUIRE(used(bytes) == 2);  // the 2 channels on paths of their own (consecutive flow keys)
        if (calls == 1) {
            one = bytes;
            continue;
        }
        // Five calls: the same spines, each carrying exactly five times what it carried for one call.
        require_scaled(bytes, one, calls);
    }
}

TEST_CASE("channels that share a path merge the same way call after call", "[sim][network]") {
    // 8 channels over 4 spines: some share a spine and travel as one flow. The first call finds which merge into
    // which by comparing their routes; the later calls take what it found (start_flows): the same flows, so five
    // calls start five times one call's flows, each spine carries five times its bytes, and each call takes as
    // long as the first to the picosecond (back to back, alone on the network).
    const auto cluster = two_leaves();
    const auto options = ring_options(8);
    std::vector<double> one;
    std::uint64_t one_flows = 0;
    for (const int calls : {1, 5}) {
        const auto r = sim::replay(all_reduces(calls), cluster, options);
        const auto bytes = uplink_bytes(r);
        REQUIRE(used(bytes) >= 2);
        REQUIRE(r.collectives.size() == static_cast<std::size_t>(calls));
        if (calls == 1) {
            one = bytes;
            one_flows = r.flows;
            REQUIRE(one_flows < 2 * 2 * 8);  // (2 GPUs x 2 steps x 8 channels, were none merged)
            continue;
        }
        REQUIRE(r.flows == calls * one_flows);
        require_scaled(bytes, one, calls);
        const auto took = [&](std::size_t k) { return r.collectives[k].end - r.collectives[k].first_arrival; };
        for (std::size_t k = 1; k < r.collectives.size(); ++k) REQUIRE(took(k) == took(0));
    }
}
