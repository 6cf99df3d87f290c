// Links degraded and failing under running flows, and GPUs failing: closed forms on a ring of GPUs (a link at half
// bandwidth doubles the time of the bytes left; a failed link's flows finish over the detour with every byte), the
// same answers with and without classes of flows, and located errors when no path is left.
#include <catch2/catch.hpp>

#include "engine/yaml_reader.h"
#include "sim/analysis.h"
#include "sim/cluster_events.h"
#include "tests/sim/replay_fixture.h"
#include "topologies/topology_loader.h"

using namespace clustersim;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using engine::Time;
using testing::GraphBuilder;
using traces::OpKind;

namespace {
std::vector<sim::ClusterEvent> events(const std::string& yaml, const topo::Cluster& cluster) {
    return sim::read_cluster_events(engine::YamlValue::load_string(yaml, "s.yaml"), cluster);
}

// Rank 0 sends 10 MB to rank 1 (the direct link: 1 us + 200 us at 50 GB/s alone).
traces::OpGraph one_send() {
    GraphBuilder b(4);
    b.p2p(OpKind::send, 0, 1, "send", 10'000'000);
    b.p2p(OpKind::recv, 1, 0, "recv", 10'000'000);
    return b.g;
}
}  // namespace

TEST_CASE("a link degraded to half its bandwidth doubles the time of the bytes left on it", "[sim][events]") {
    const auto cluster = testing::ring_cluster(4, "50 GB/s", "1 us");
    auto o = testing::exact_options();
    REQUIRE(sim::replay(one_send(), cluster, o).timeline.makespan == 201us);
    o.cluster_events = events("[{at: 100 us, link: gpu0 -> gpu1, bandwidth: 0.5}]", cluster);
    const auto r = sim::replay(one_send(), cluster, o);
    // 5 MB sent by 100 us; the other 5 MB at 25 GB/s take 200 us; the last byte lands 1 us later.
    REQUIRE(r.timeline.makespan == 301us);
    REQUIRE(r.bytes_on_network == 10'000'000);
    REQUIRE(r.timeline.markers == std::vector<traces::TimelineMarker>{{100us, "gpu0 -> gpu1 at 50% bandwidth"}});
}

TEST_CASE("a failed link's flows go on over the detour with the bytes they have left", "[sim][events]") {
    const auto cluster = testing::ring_cluster(4, "50 GB/s", "1 us");
    auto o = testing::exact_options();
    o.cluster_events = events("[{at: 100 us, until: 150 us, link: gpu0 <-> gpu1, down: true}]", cluster);
    REQUIRE(o.cluster_events.size() == 2);
    const auto r = sim::replay(one_send(), cluster, o);
    // 5 MB left at 100 us take the three links gpu0 -> gpu3 -> gpu2 -> gpu1 at 50 GB/s: 100 us, and 3 us of
    // latency. The link's return at 150 us leaves the flow on its detour.
    REQUIRE(r.timeline.makespan == 203us);
    REQUIRE(r.bytes_on_network == 10'000'000);
    const auto summary = sim::summarize_run(one_send(), r.timeline);
    REQUIRE(summary.cluster_events.size() == 2);
    REQUIRE(summary.cluster_events[1].label == "gpu0 <-> gpu1 restored");
}

TEST_CASE("a failure under a ring all-reduce gives the same times with and without classes of flows", "[sim][events]") {
    const auto cluster = testing::ring_cluster(8, "50 GB/s", "1 us");
    GraphBuilder b(8);
    for (std::uint32_t r = 0; r < 8; ++r) b.collective(r, "comm", "world", {0, 1, 2, 3, 4, 5, 6, 7}, 64'000'000);
    for (const char* change : {"down: true", "bandwidth: 0.25"}) {
        INFO(change);
        auto o = testing::exact_options();
        o.cluster_events = events(std::string("[{at: 300 us, link: gpu2 <-> gpu3, ") + change + "}]", cluster);
        const auto classes = sim::replay(b.g, cluster, o);
        o.network.flow_classes = false;
        const auto single = sim::replay(b.g, cluster, o);
        REQUIRE(classes.bytes_on_network == single.bytes_on_network);
        REQUIRE(classes.bytes_on_network == 2 * 7 * 64'000'000ULL);
        REQUIRE(static_cast<double>(classes.timeline.makespan.count()) ==
                Approx(static_cast<double>(single.timeline.makespan.count())).epsilon(1e-9));
        // Slower than the undisturbed call (2 x 7 x (1 us + 8 MB / 50 GB/s) = 2,254 us).
        REQUIRE(classes.timeline.makespan > 2254us);
    }
}

TEST_CASE("the flows a failure re-routes take the same detours with and without classes", "[sim][events]") {
    // A rail's leaf fails under a ring all-reduce of 8 channels: the flows in flight on it go around, over the other
    // rails and the spines, a choice of equal paths. Each takes the detour keyed by the path it was on; keyed by the
    // network's slot for it (which depends on the order in which earlier flows ended, and so on classes), classes
    // and flows one by one took different detours.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=4"});
    GraphBuilder b(32);
    std::vector<std::uint32_t> all(32);
    for (std::uint32_t r = 0; r < 32; ++r) all[r] = r;
    for (std::uint32_t r = 0; r < 32; ++r) b.collective(r, "comm", "world", all, 256'000'000);
    sim::ReplayOptions o;
    o.algorithm = sim::find_collective_algorithm("ring");
    o.cluster_events = events("[{at: 400 us, until: 900 us, device: leaf0.rail3, down: true}]", cluster);
    const auto classes = sim::replay(b.g, cluster, o);
    o.network.flow_classes = false;
    const auto single = sim::replay(b.g, cluster, o);
    for (std::size_t i = 0; i < b.g.ops.size(); ++i) {
        INFO("op " << i);
        REQUIRE(static_cast<double>(classes.timeline.ends[i].count()) ==
                Approx(static_cast<double>(single.timeline.ends[i].count())).epsilon(1e-9));
    }
}

TEST_CASE("no path left, or a failed GPU with work, ends the run with a located error", "[sim][events]") {
    const auto two = testing::ring_cluster(2, "50 GB/s", "1 us");
    GraphBuilder b(2);
    b.p2p(OpKind::send, 0, 1, "send", 10'000'000);
    b.p2p(OpKind::recv, 1, 0, "recv", 10'000'000);
    auto o = testing::exact_options();
    o.cluster_events = events("[{at: 100 us, device: gpu1, down: true}]", two);
    REQUIRE_THROWS_WITH(sim::replay(b.g, two, o), Contains("at 100.000 us: gpu1 down: no path left from 'gpu0' to "
                                                           "'gpu1' for rank 0 op 0 'send' (send to rank 1)") &&
                                                      Contains("5000000 of 10000000 bytes not sent"));
    GraphBuilder c(2);
    c.compute(0, "compute", 100us);
    c.compute(1, "compute", 100us);
    o.cluster_events = events("[{at: 50 us, gpu: 1, down: true}]", two);
    REQUIRE_THROWS_WITH(sim::replay(c.g, two, o), Contains("s.yaml:1") && Contains("GPU 1 (gpu1) fails") &&
                                                      Contains("rank 1 had 1 ops left, running rank 1 op 1"));
    // After the job's end a failure changes nothing.
    o.cluster_events = events("[{at: 150 us, gpu: 1, down: true}]", two);
    const auto after = sim::replay(c.g, two, o);
    REQUIRE(after.timeline.makespan == 100us);
    REQUIRE(after.timeline.markers.empty());
}

TEST_CASE("bad cluster events are located errors", "[sim][events]") {
    const auto cluster = testing::ring_cluster(4, "50 GB/s", "1 us");
    REQUIRE_THROWS_WITH(events("[{at: 1 us, link: gpu0 -> gpu9, down: true}]", cluster),
                        Contains("s.yaml:1") && Contains("no device 'gpu9'"));
    REQUIRE_THROWS_WITH(events("[{at: 1 us, link: gpu0 -> gpu2, down: true}]", cluster),
                        Contains("no link gpu0 -> gpu2"));
    REQUIRE_THROWS_WITH(events("[{at: 1 us, link: gpu0 gpu1, down: true}]", cluster), Contains("\"A -> B\""));
    REQUIRE_THROWS_WITH(events("[{at: 1 us, link: gpu0 -> gpu1}]", cluster), Contains("either down"));
    REQUIRE_THROWS_WITH(events("[{at: 1 us, link: gpu0 -> gpu1, bandwidth: 0}]", cluster), Contains("above 0"));
    REQUIRE_THROWS_WITH(events("[{at: 5 us, until: 2 us, link: gpu0 -> gpu1, down: true}]", cluster),
                        Contains("after 'at'"));
    REQUIRE_THROWS_WITH(events("[{at: 1 us, gpu: 7, down: true}]", cluster), Contains("from 0 to 3"));
    REQUIRE_THROWS_WITH(events("[{at: 1 us, gpu: 1, link: gpu0 -> gpu1, down: true}]", cluster),
                        Contains("one of link, device or gpu"));
    // In time order, the file's order within an instant.
    const auto sorted =
        events("[{at: 9 us, gpu: 1, down: true}, {at: 2 us, link: gpu0 -> gpu1, bandwidth: 2}]", cluster);
    REQUIRE(sorted.front().at == 2us);
    REQUIRE(sorted.front().factor == 2);
}
