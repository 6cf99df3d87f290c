// Classes of identical flows change the cost, never the answer: the same runs with classes and with every flow
// solved alone give the same arrival times, on random batches with competing traffic on an oversubscribed fabric
// and on collectives, and the classes really form (and split when contention sets their members apart).
#include <random>

#include <catch2/catch.hpp>

#include "engine/simulator.h"
#include "sim/network/flow_network.h"
#include "sim/replay/replay.h"
#include "sim/scenario/scenario.h"
#include "topologies/topology_loader.h"

using namespace clustersim;

namespace {

struct BatchRun {
    std::vector<engine::Time> arrivals;
    std::vector<engine::Time> recorded_ends;  // by owner: the end its flow record holds
    std::vector<double> link_delay_s;
    std::uint64_t classes = 0, split = 0;
};

/// Batches of flows alike in size and weight (random ends, so some share links and some do not) start together at
/// random instants, beside single flows of random size. The schedule is drawn up front, so that it does not depend
/// on the order in which simultaneous arrivals are reported. With `link_events`, a third of the batches degrade (or
/// restore) a link of one of their routes in the instant they start, before the update attaches them. With or without
/// `records`, the flows that start in classes have no state of their own until their class splits (flow_network.h).
BatchRun random_batches(const topo::Cluster& cluster, bool classes, bool incremental, std::uint64_t seed,
                        bool records = true, bool link_events = false) {
    engine::Simulator sim;
    sim::NetworkOptions options;
    options.flow_classes = classes;
    options.incremental = incremental;
    options.record_link_utilization = false;
    options.record_flows = records;  // (a class's arrival ends its members' records too)
    sim::FlowNetwork net(cluster, sim, options);
    std::mt19937_64 rng(seed);
    const auto& gpus = cluster.gpus();
    struct Planned {
        topo::DeviceId src, dst;
        std::vector<topo::LinkId> route;
        std::uint64_t bytes;
        std::uint32_t weight;
    };
    std::vector<std::vector<Planned>> batches;
    struct LinkEvent {
        std::uint64_t flow = 0, hop = 0;  // of the batch, drawn as numbers (taken modulo its size and route)
        bool planned = false;
    };
    std::vector<LinkEvent> link_event;
    std::mt19937_64 event_rng(seed + 1000);  // (apart: the batches are those of the runs without link events)
    std::vector<double> link_factor(cluster.links().size(), 1.0);
    for (int b = 0; b < 160; ++b) {
        link_event.push_back({event_rng(), event_rng(), link_events && event_rng() % 3 == 0});
        const std::uint64_t bytes = 1 + rng() % 20'000'000;
        const std::uint32_t weight = 1 + static_cast<std::uint32_t>(rng() % 2);
        const std::uint64_t n = rng() % 3 == 0 ? 1 : 2 + rng() % 30;
        auto& batch = batches.emplace_back();
        for (std::uint64_t k = 0; k < n; ++k) {
            const auto src = gpus[rng() % gpus.size()];
            auto dst = gpus[rng() % gpus.size()];
            if (dst == src) dst = gpus[(src.index() + 1) % gpus.size()];
            batch.push_back({src, dst, net.router().route(src, dst, rng()), bytes, weight});
        }
        // Instants on a 10 us grid, so that some batches start together.
        sim.schedule_at(engine::Time{static_cast<std::int64_t>(rng() % 400) * 10'000'000}, 1000,
                        static_cast<std::uint32_t>(b));
    }
    BatchRun run;
    std::uint32_t owner = 0;
    std::vector<std::uint32_t> first_owner;
    for (const auto& batch : batches) {
        first_owner.push_back(owner);
        owner += static_cast<std::uint32_t>(batch.size());
    }
    run.arrivals.assign(owner, engine::Time{-1});
    auto handler = [&](const engine::Event& e) {
        if (e.kind == 1000) {
            std::uint32_t o = first_owner[e.target];
            const auto& batch = batches[e.target];
            for (const Planned& p : batch) net.start_flow_on_route(p.src, p.dst, p.route, p.bytes, o++, p.weight);
            const LinkEvent& le = link_event[e.target];
            if (le.planned) {
                const auto& route = batch[le.flow % batch.size()].route;
                const topo::LinkId l = route[le.hop % route.size()];
                link_factor[l.index()] = link_factor[l.index()] == 1.0 ? 0.25 : 1.0;
                net.set_link_state(l, link_factor[l.index()], "test");
            }
            return;
        }
        const auto event = net.handle(e);
        if (!event.arrived) return;
        for (const sim::FlowId f : event.flows) run.arrivals[net.owner(f)] = sim.now();
    };
    sim.run(handler);
    run.recorded_ends.assign(owner, engine::Time{-1});
    for (const sim::FlowRecord& r : net.records()) run.recorded_ends[r.owner] = r.end;
    for (std::size_t l = 0; l < cluster.links().size(); ++l)
        run.link_delay_s.push_back(net.contention_delay_s(topo::LinkId::from_index(l)));
    run.classes = net.classes_formed();
    run.split = net.classes_split();
    return run;
}

/// The network with classes of identical flows or without, recording no link utilization.
sim::NetworkOptions classes_or_not(bool classes) {
    sim::NetworkOptions options;
    options.flow_classes = classes;
    options.record_link_utilization = false;
    return options;
}

/// Ranks 0 .. n-1 of a graph, and the communicator "world" of them all (the graph's first).
std::vector<traces::RankId> world_of(traces::OpGraph& g, std::uint32_t n) {
    g.source = "classes test";
    g.rank_count = n;
    std::vector<traces::RankId> all;
    for (std::uint32_t r = 0; r < n; ++r) all.push_back(traces::RankId{r});
    g.communicator("world", all);
    return all;
}

/// The contention delay charged to all links of a run.
double total_delay_s(const BatchRun& run) {
    double total = 0;
    for (const double d : run.link_delay_s) total += d;
    return total;
}

void require_same(engine::Time reference, engine::Time fast) {
    INFO("reference " << reference.count() << " ps, with classes " << fast.count() << " ps");
    // To the picosecond: the fill's residuals are exact and flows at one level get one rate to the bit, whether
    // a class or flows one by one reached it (max_min_fair.cpp).
    REQUIRE(reference.count() == fast.count());
}

/// One all-reduce of `bytes` over ranks 0 .. n-1, each rank's only op.
traces::OpGraph all_reduce_graph(std::uint32_t n, std::uint64_t bytes) {
    traces::OpGraph g;
    for (const traces::RankId r : world_of(g, n)) {
        traces::Op op{g.stream(r, "comm"), g.intern("grads"), traces::OpKind::collective,
                      traces::KernelClass::communication};
        op.set_bytes(bytes);
        op.set_comm(traces::CommId{0});
        g.add(op);
    }
    return g;
}

/// The graph replayed with the ring, with classes (first) and with every flow alone: every op ends at the same time.
/// Returns both runs' event counts.
std::pair<std::uint64_t, std::uint64_t> require_ring_as_reference(const traces::OpGraph& g,
                                                                  const topo::Cluster& cluster) {
    sim::ReplayOptions options;
    options.algorithm = sim::find_collective_algorithm("ring");
    const auto fast = sim::replay(g, cluster, options);
    options.network.flow_classes = false;
    const auto reference = sim::replay(g, cluster, options);
    require_same(reference.timeline.makespan, fast.timeline.makespan);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        INFO("op " << i);
        require_same(reference.timeline.ends[i], fast.timeline.ends[i]);
    }
    return {fast.events, reference.events};
}

}  // namespace

TEST_CASE("flow classes give the arrival times of flows solved one by one", "[sim][network][classes]") {
    // An oversubscribed leaf-spine fabric (2 nodes per leaf, 2 spines), so that batches contend among themselves
    // and with the single flows.
    const auto cluster =
        topo::load_topology("dgx-h100", {"nodes=8", "fabric=leaf-spine", "nodes_per_leaf=2", "spines=2"});
    for (const bool incremental : {true, false}) {
        for (std::uint64_t seed = 1; seed <= 4; ++seed) {
            INFO("seed " << seed << (incremental ? " incremental" : " full component"));
            const BatchRun reference = random_batches(cluster, false, incremental, seed);
            const BatchRun fast = random_batches(cluster, true, incremental, seed);
            REQUIRE(reference.classes == 0);
            REQUIRE(fast.classes > 100);
            REQUIRE(fast.split > 0);  // contention told some members apart
            for (std::size_t i = 0; i < reference.arrivals.size(); ++i) {
                INFO("flow " << i);
                REQUIRE(reference.arrivals[i].count() > 0);
                require_same(reference.arrivals[i], fast.arrivals[i]);
                REQUIRE(fast.recorded_ends[i] == fast.arrivals[i]);  // a class member's record ends with it
                REQUIRE(reference.recorded_ends[i] == reference.arrivals[i]);
            }
            // Every flow's lost time is charged to one of its bottleneck links: the total is the same (a flow with
            // several bottlenecks may charge another of them, as the incremental update keeps a flow's old one).
            const double reference_total = total_delay_s(reference), fast_total = total_delay_s(fast);
            REQUIRE(reference_total > 0);
            REQUIRE(fast_total == Approx(reference_total).epsilon(1e-9));
        }
    }
}

TEST_CASE("flow classes without flow records, and links changing as classes form, give the times of flows one by one",
          "[sim][network][classes]") {
    // A class's members never have states of their own unless it splits (the records, when kept, are by slot), and a
    // link that changes state in the instant flows start makes their states written before the update
    // (FlowNetwork::materialize).
    const auto cluster =
        topo::load_topology("dgx-h100", {"nodes=8", "fabric=leaf-spine", "nodes_per_leaf=2", "spines=2"});
    for (const bool link_events : {false, true}) {
        for (std::uint64_t seed = 1; seed <= 3; ++seed) {
            INFO("seed " << seed << (link_events ? " with link events" : ""));
            const BatchRun reference = random_batches(cluster, false, true, seed, false, link_events);
            const BatchRun fast = random_batches(cluster, true, true, seed, false, link_events);
            REQUIRE(fast.classes > 100);
            REQUIRE(fast.split > 0);
            for (std::size_t i = 0; i < reference.arrivals.size(); ++i) {
                INFO("flow " << i);
                REQUIRE(reference.arrivals[i].count() > 0);
                require_same(reference.arrivals[i], fast.arrivals[i]);
            }
            const double reference_total = total_delay_s(reference), fast_total = total_delay_s(fast);
            REQUIRE(fast_total == Approx(reference_total).epsilon(1e-9));
        }
    }
}

TEST_CASE("a ring all-reduce runs its steps as classes with the times of flows one by one", "[sim][network][classes]") {
    // 8 channels on 4 DGX-H100 nodes: each step's transfers inside nodes share the GPUs' NVLink ports (classes held
    // below their cap, checked member by member), those across nodes the NICs.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=4"});
    // Sizes that split evenly: with a byte more on some members, steps of unequal transfers make the ring's timing
    // depend on rounding (flows solved one by one differ by 0.1% between the incremental and the full update).
    for (const std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{64} << 20}) {
        INFO("bytes " << bytes);
        const auto [fast, reference] = require_ring_as_reference(all_reduce_graph(32, bytes), cluster);
        REQUIRE(fast * 4 < reference);
    }
}

TEST_CASE("late ranks and competing traffic give the same replay with and without classes", "[sim][network][classes]") {
    // All-reduces on every node's GPUs and across nodes at once, members entering at random times.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=4", "fabric=leaf-spine", "nodes_per_leaf=1"});
    traces::OpGraph g;
    const auto all = world_of(g, 32);
    const traces::CommId world{0};
    std::vector<traces::CommId> node;
    for (std::uint32_t n = 0; n < 4; ++n)
        node.push_back(g.communicator("node" + std::to_string(n),
                                      std::vector<traces::RankId>(all.begin() + 8 * n, all.begin() + 8 * n + 8)));
    std::mt19937_64 rng(7);
    for (int call = 0; call < 6; ++call) {
        for (const traces::RankId r : all) {
            traces::Op compute{g.stream(r, "compute"), g.intern("kernel"), traces::OpKind::compute,
                               traces::KernelClass::gemm};
            const traces::OpId c = g.add(compute, {}, engine::Time{static_cast<std::int64_t>(rng() % 40) * 1'000'000});
            traces::Op op{g.stream(r, call % 2 ? "tp" : "dp"), g.intern("grads"), traces::OpKind::collective,
                          traces::KernelClass::communication};
            op.set_bytes(call % 2 ? (8 << 20) : (32 << 20));
            op.set_comm(call % 2 ? node[r.value / 8] : world);
            const traces::OpId after[] = {c};
            g.add(op, after);
        }
    }
    sim::ReplayOptions options;
    options.algorithm = sim::find_collective_algorithm("ring");
    const auto fast = sim::replay(g, cluster, options);
    options.network.flow_classes = false;
    const auto reference = sim::replay(g, cluster, options);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        INFO("op " << i);
        require_same(reference.timeline.start(traces::OpId::from_index(i)),
                     fast.timeline.start(traces::OpId::from_index(i)));
        require_same(reference.timeline.ends[i], fast.timeline.ends[i]);
    }
    REQUIRE(fast.events < reference.events);
}

TEST_CASE("a class that contention sets apart goes on as two classes: the members held and the others",
          "[sim][network][classes]") {
    // Eight transfers alike start together, GPU k of one node to GPU k of the other (each on its own rail); a longer
    // transfer already sends on member 0's path. Member 0 gets half its path, the others the whole of theirs: the
    // class is split once, member 0 going on alone and the seven others as one class, which arrives in one event.
    const auto cluster = topo::load_topology("dgx-h100", {"nodes=2"});
    const auto& gpus = cluster.gpus();
    constexpr std::uint64_t bytes = 50'000'000;
    const engine::Time start{1'000'000};
    struct Run {
        std::vector<engine::Time> arrival = std::vector<engine::Time>(8, engine::Time{-1});
        std::size_t largest_event = 0;
        std::uint64_t formed = 0, split = 0;
        sim::FlowNetwork::RouteCost cost[2];  // member 0's path and member 1's
    };
    const auto run = [&](bool classes) {
        engine::Simulator sim;
        sim::FlowNetwork net(cluster, sim, classes_or_not(classes));
        std::vector<std::vector<topo::LinkId>> routes;
        for (std::uint32_t k = 0; k < 8; ++k) routes.push_back(net.router().route(gpus[k], gpus[8 + k], k));
        net.start_flow_on_route(gpus[0], gpus[8], routes[0], 4 * bytes, 100, 1);
        sim.schedule_at(start, 1000, 0);
        Run r;
        auto handler = [&](const engine::Event& e) {
            if (e.kind == 1000) {
                for (std::uint32_t k = 0; k < 8; ++k)
                    net.start_flow_on_route(gpus[k], gpus[8 + k], routes[k], bytes, k, 1);
                return;
            }
            const auto event = net.handle(e);
            if (!event.arrived) return;
            r.largest_event = std::max(r.largest_event, event.flows.size());
            for (const sim::FlowId f : event.flows)
                if (net.owner(f) < 8) r.arrival[net.owner(f)] = sim.now();
        };
        sim.run(handler);
        r.formed = net.classes_formed();
        r.split = net.classes_split();
        r.cost[0] = net.route_cost(routes[0]);
        r.cost[1] = net.route_cost(routes[1]);
        return r;
    };
    const Run fast = run(true), reference = run(false);
    REQUIRE(fast.formed == 1);
    REQUIRE(fast.split == 1);
    REQUIRE(fast.largest_event == 7);
    REQUIRE(reference.largest_event == 1);
    // Closed forms: alone on its path, latency + bytes / bandwidth; member 0 at half its path's bandwidth (the
    // longer transfer outlasts it).
    const auto& alone = fast.cost[1];
    const auto& shared = fast.cost[0];
    REQUIRE(fast.arrival[0] == start + shared.latency + engine::transfer_time(bytes, shared.bottleneck / 2));
    for (std::uint32_t k = 1; k < 8; ++k) {
        INFO("member " << k);
        REQUIRE(fast.arrival[k] == start + alone.latency + engine::transfer_time(bytes, alone.bottleneck));
    }
    for (std::uint32_t k = 0; k < 8; ++k) REQUIRE(fast.arrival[k] == reference.arrival[k]);
}

TEST_CASE("a ring whose transfers collide on spine links gives the times of flows one by one",
          "[sim][network][classes]") {
    // 6 DGX-H100 nodes, 4 per leaf and 2 spines: the ring's steps between the leaves share spine links, so classes
    // split and their parts go on. Splitting into single flows, and taking a flow's progress at every look rather
    // than at its rate changes, once made this run 0.2% shorter than the reference (459.82 us against 460.74).
    const auto cluster =
        topo::load_topology("dgx-h100", {"nodes=6", "fabric=leaf-spine", "nodes_per_leaf=4", "spines=2"});
    const auto [fast, reference] = require_ring_as_reference(all_reduce_graph(48, std::uint64_t{64} << 20), cluster);
    REQUIRE(fast * 4 < reference);
}

TEST_CASE("a data-parallel job with kernel noise gives the times of flows one by one, to the picosecond",
          "[sim][network][classes]") {
    // Example 17 (ResNet-50 on 64 A100s, kernel noise): the gradients' rings share NVLink ports and NICs, flows sit
    // at one level on several links at once, and an update with classes recomputes other flows than one with single
    // flows. The fill's rounding used to depend on that: a later link's share, computed after some of its flows were
    // fixed through another link, or beside flows kept at a rate rounded in an earlier update, came out one unit in
    // the last place away, and the ring's timing, chaotic where transfers tie, grew it (69.306 against 69.304 ms).
    auto scenario = sim::load_scenario(
        std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/examples/17-data-parallel-stragglers/scenario.yaml",
        {"system.samples=1", "outputs.perfetto=false"});
    const auto fast = sim::run_scenario(scenario, 1);
    scenario.options.network.flow_classes = false;
    const auto reference = sim::run_scenario(scenario, 1);
    require_same(reference.replay.timeline.makespan, fast.replay.timeline.makespan);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < scenario.graph.ops.size(); ++i)
        differ += reference.replay.timeline.ends[i] != fast.replay.timeline.ends[i] ? 1 : 0;
    REQUIRE(differ == 0);
    REQUIRE(fast.replay.events < reference.replay.events);  // classes did form
}

TEST_CASE("a class whose members share links counts each shared link once per member, as flows one by one do",
          "[sim][network][classes]") {
    // 16 transfers alike, each GPU of node 0 to one GPU of node 2 and one of node 3, cross from one leaf to the other
    // over 2 spines: each GPU's links to its NIC and the leaf carry two members, which the class attaches once with
    // their count. A longer flow already on one path and a second batch from nodes 2-3 into node 1 (two members into
    // each of its GPUs) make the shared links bind. Arrivals to the picosecond against every flow alone, and the
    // links' kept sums against their flows after every event.
    const auto cluster =
        topo::load_topology("dgx-h100", {"nodes=4", "fabric=leaf-spine", "nodes_per_leaf=2", "spines=2"});
    const auto& gpus = cluster.gpus();
    const auto run = [&](bool classes) {
        engine::Simulator sim;
        sim::FlowNetwork net(cluster, sim, classes_or_not(classes));
        std::vector<std::vector<topo::LinkId>> out, back;
        for (std::uint32_t k = 0; k < 16; ++k) {
            out.push_back(net.router().route(gpus[k % 8], gpus[16 + k], k));
            back.push_back(net.router().route(gpus[16 + k], gpus[8 + k % 8], 3 * k));
        }
        net.start_flow_on_route(gpus[0], gpus[16], out[0], 400'000'000, 100, 1);
        sim.schedule_at(engine::Time{2'000'000}, 1000, 0);
        sim.schedule_at(engine::Time{9'000'000}, 1000, 1);
        std::vector<engine::Time> arrival(32, engine::Time{-1});
        std::size_t largest_event = 0;
        auto handler = [&](const engine::Event& e) {
            if (e.kind == 1000) {
                for (std::uint32_t k = 0; k < 16; ++k) {
                    if (e.target == 0) net.start_flow_on_route(gpus[k % 8], gpus[16 + k], out[k], 60'000'000, k, 1);
                    if (e.target == 1)
                        net.start_flow_on_route(gpus[16 + k], gpus[8 + k % 8], back[k], 90'000'000, 16 + k, 2);
                }
                return;
            }
            const auto event = net.handle(e);
            net.audit();
            if (!event.arrived) return;
            largest_event = std::max(largest_event, event.flows.size());
            for (const sim::FlowId f : event.flows)
                if (net.owner(f) < 32) arrival[net.owner(f)] = sim.now();
        };
        sim.run(handler);
        std::vector<double> delay_s;  // by link: the time lost by the flows it held
        for (std::size_t l = 0; l < cluster.links().size(); ++l)
            delay_s.push_back(net.contention_delay_s(topo::LinkId::from_index(l)));
        return std::tuple{arrival, largest_event, net.classes_formed(), delay_s};
    };
    const auto [fast, fast_largest, formed, fast_delay_s] = run(true);
    const auto [reference, reference_largest, none, reference_delay_s] = run(false);
    REQUIRE(formed == 2);
    REQUIRE(none == 0);
    REQUIRE(fast_largest > 1);  // members arrived together, as a class
    REQUIRE(reference_largest == 1);
    for (std::size_t k = 0; k < 32; ++k) {
        INFO("transfer " << k);
        REQUIRE(reference[k].count() > 0);
        require_same(reference[k], fast[k]);
    }
    // Each member's lost time is charged to the same link as its flow's alone: of a member's bottlenecks, the one of
    // lowest id, as the fill picks among equal shares.
    double total_s = 0;
    for (std::size_t l = 0; l < reference_delay_s.size(); ++l) {
        INFO("link " << l);
        CHECK(fast_delay_s[l] == Approx(reference_delay_s[l]).epsilon(1e-9).margin(1e-15));
        total_s += reference_delay_s[l];
    }
    CHECK(total_s > 0);
}
