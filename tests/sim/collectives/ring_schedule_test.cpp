// Ring schedules are the ring algorithm's listed plans as formulas: the same transfers and dependencies, and
// replays that match the listed form to the picosecond (skewed arrivals, competing traffic, oversubscription).
#include <map>
#include <random>
#include <set>

#include <catch2/catch.hpp>

#include "sim/collectives/collective_algorithm.h"
#include "tests/sim/replay_fixture.h"

using namespace clustersim;
using traces::CollectiveKind;

namespace {

sim::PlanRequest random_request(std::mt19937_64& rng) {
    const CollectiveKind kinds[] = {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                                    CollectiveKind::all_gather, CollectiveKind::barrier};
    sim::PlanRequest r;
    r.kind = kinds[rng() % 4];
    r.members = 2 + static_cast<std::uint32_t>(rng() % 29);
    r.bytes = 1 + rng() % 10'000'000;
    r.channels = 1 + static_cast<std::uint32_t>(rng() % 8);
    r.switched_nodes = rng() % 4 != 0;
    const std::uint32_t per_node = 1 + static_cast<std::uint32_t>(rng() % 8);
    for (std::uint32_t m = 0; m < r.members; ++m) r.node_of.push_back(m / per_node);
    return r;
}

}  // namespace

TEST_CASE("a ring schedule has exactly the transfers and dependencies of the listed ring", "[sim][collectives]") {
    const auto ring = sim::collective_algorithms()[*sim::find_collective_algorithm("ring")].make();
    std::mt19937_64 rng(12);
    std::uint32_t relayed = 0;
    for (int round = 0; round < 200; ++round) {
        const sim::PlanRequest r = random_request(rng);
        INFO("round " << round << " members " << r.members << " channels " << r.channels << " kind "
                      << traces::collective_kind_name(r.kind));
        const sim::CollectivePlan plan = ring->plan(r);
        REQUIRE(plan.scheduled());
        const sim::CollectivePlan listed = plan.expanded();
        REQUIRE_FALSE(listed.scheduled());
        REQUIRE(plan.size() == listed.size());
        // Who waits for whom in the listed plan.
        std::map<std::uint64_t, std::vector<std::uint64_t>> data_dependents, fifo_successors;
        for (std::uint32_t t = 0; t < listed.size(); ++t) {
            for (const std::uint32_t a : listed.after(t)) data_dependents[a].push_back(t);
            if (listed.transfers()[t].after_sent != sim::no_transfer)
                fifo_successors[listed.transfers()[t].after_sent].push_back(t);
        }
        for (const sim::RingSchedule& schedule : plan.rings()) {
            relayed += schedule.relay != UINT32_MAX;
            std::map<std::uint32_t, std::set<std::uint64_t>> first_step;
            std::map<std::uint32_t, std::uint64_t> involved;
            for (std::uint64_t local = 0; local < schedule.size(); ++local) {
                const std::uint64_t t = schedule.first + local;
                const sim::PlannedTransfer a = plan.transfer(t), b = listed.transfers()[t];
                INFO("transfer " << t);
                REQUIRE(std::tie(a.src, a.dst, a.bytes, a.step, a.reduces) ==
                        std::tie(b.src, b.dst, b.bytes, b.step, b.reduces));
                const auto after = listed.after(static_cast<std::uint32_t>(t));
                const std::uint64_t data = schedule.data_dependency(local);
                REQUIRE(after.size() == (data == sim::RingSchedule::none ? 0U : 1U));
                if (!after.empty()) REQUIRE(after[0] == schedule.first + data);
                const std::uint64_t fifo = schedule.fifo_predecessor(local);
                REQUIRE(b.after_sent == (fifo == sim::RingSchedule::none ? sim::no_transfer : schedule.first + fifo));
                const auto& dependents = data_dependents[t];
                REQUIRE(dependents.size() <= 1);
                REQUIRE(schedule.data_dependent(local) ==
                        (dependents.empty() ? sim::RingSchedule::none : dependents[0] - schedule.first));
                const auto& successors = fifo_successors[t];
                REQUIRE(successors.size() <= 1);
                REQUIRE(schedule.fifo_successor(local) ==
                        (successors.empty() ? sim::RingSchedule::none : successors[0] - schedule.first));
                for (const std::uint32_t m : {b.src, b.dst}) {
                    ++involved[m];
                    if (b.step == 0) first_step[m].insert(local);
                }
            }
            for (std::uint32_t m = 0; m < r.members; ++m) {
                std::uint64_t out[4];
                const std::uint32_t count = schedule.first_step_transfers(m, out);
                REQUIRE(std::set<std::uint64_t>(out, out + count) == first_step[m]);
                REQUIRE(std::is_sorted(out, out + count));
                REQUIRE(schedule.member_transfers(m) == involved[m]);
            }
        }
    }
    REQUIRE(relayed > 0);  // odd node counts with channels: the wrap-around relay was covered
}

namespace {

struct Case {
    std::uint32_t ranks = 0;
    bool protocols = false;
    std::uint32_t channels = 1;
};

/// A ring collective over all ranks after skewed compute, with a competing collective on half of the ranks and
/// a point-to-point transfer started in between.
traces::OpGraph random_graph(std::mt19937_64& rng, std::uint32_t ranks, CollectiveKind kind) {
    testing::GraphBuilder b(ranks);
    std::vector<std::uint32_t> all, odd;
    for (std::uint32_t r = 0; r < ranks; ++r) {
        all.push_back(r);
        if (r % 2 == 1) odd.push_back(r);
    }
    const std::uint64_t bytes = 1 + rng() % 64'000'000;
    const std::uint64_t other = 1 + rng() % 16'000'000;
    for (std::uint32_t r = 0; r < ranks; ++r) {
        const auto skew = engine::Time{static_cast<std::int64_t>(rng() % 20'000'000)};
        const auto c = b.compute(r, "compute", skew);
        b.collective(r, "comm", "world", all, bytes, kind, {c});
        if (r % 2 == 1) b.collective(r, "side", "odd", odd, other, CollectiveKind::all_gather);
    }
    b.p2p(traces::OpKind::send, 0, ranks - 1, "p2p", other);
    b.p2p(traces::OpKind::recv, ranks - 1, 0, "p2p", other);
    return b.g;
}

}  // namespace

TEST_CASE("replays with ring schedules match the listed ring plans to the picosecond", "[sim][collectives]") {
    // Three nodes (an odd count: relayed wrap-around hops with channels) on a 2:1 oversubscribed leaf-spine fabric,
    // two nodes per leaf, so rings cross a spine and compete with the side traffic.
    const auto cluster = topo::load_topology(
        "dgx-h100", {"nodes=3", "fabric=leaf-spine", "nodes_per_leaf=2", "spines=1", "oversubscription=2"});
    std::mt19937_64 rng(7);
    const CollectiveKind kinds[] = {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                                    CollectiveKind::all_gather};
    for (int round = 0; round < 12; ++round) {
        const std::uint32_t ranks = 8 + static_cast<std::uint32_t>(rng() % 17);  // 8..24: one to three nodes
        const CollectiveKind kind = kinds[rng() % 3];
        const traces::OpGraph g = random_graph(rng, ranks, kind);
        auto options = testing::exact_options();
        options.protocols = rng() % 2 == 0;
        options.channels = 1 + static_cast<std::uint32_t>(rng() % 8);
        options.algorithm = sim::find_collective_algorithm("ring");
        options.closed_form = false;  // (both run as flows: the same events too)
        INFO("round " << round << " ranks " << ranks << " protocols " << options.protocols << " channels "
                      << options.channels << " kind " << traces::collective_kind_name(kind));
        const auto scheduled = sim::replay(g, cluster, options);
        options.ring_schedules = false;
        const auto listed = sim::replay(g, cluster, options);
        REQUIRE(scheduled.timeline.makespan == listed.timeline.makespan);
        REQUIRE(scheduled.timeline.ends == listed.timeline.ends);
        REQUIRE(scheduled.timeline.starts == listed.timeline.starts);
        REQUIRE(scheduled.events == listed.events);
        REQUIRE(scheduled.flows == listed.flows);
        REQUIRE(scheduled.classes_formed == listed.classes_formed);
        REQUIRE(scheduled.classes_split == listed.classes_split);
        REQUIRE(scheduled.bytes_on_network == listed.bytes_on_network);
        REQUIRE(scheduled.collectives.size() == listed.collectives.size());
        for (std::size_t c = 0; c < listed.collectives.size(); ++c)
            REQUIRE(scheduled.collectives[c].end == listed.collectives[c].end);
    }
}
