// The layers generator's federated rounds (see layer_builder.h): the deadline and the dropped clients read from
// the plan, each round's clients and those that made it, and the model's moves to each round's newcomers.
#include <algorithm>

#include <fmt/format.h>

#include "engine/split_list.h"
#include "engine/units.h"
#include "workloads/layers/layer_builder.h"

namespace clustersim::workloads {

/// round_deadline and dropped_clients ("ROUND:RANK, ..."), for federated rounds only.
void read_deadline(const engine::Params& p, LayerPlan& plan) {
    const std::string& deadline = p.string("round_deadline");
    const std::string& given = p.string("dropped_clients");
    if (deadline.empty() && given.empty()) return;
    if (!plan.sampling())
        p.fail(deadline.empty() ? "dropped_clients" : "round_deadline",
               "a deadline drops late clients from federated rounds: it needs clients_per_round");
    if (!deadline.empty()) {
        plan.round_deadline_s = engine::to_seconds(engine::parse_time(deadline, p.location("round_deadline")));
        if (!(plan.round_deadline_s > 0)) p.fail("round_deadline", "expected a time above 0");
    }
    const std::uint32_t rounds = plan.steps / plan.local_steps;
    plan.dropped.assign(rounds, {});
    if (given.empty()) return;
    plan.drops_given = true;
    for (std::string item : engine::split_list(given)) {
        item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
        const std::size_t colon = item.find(':');
        std::uint64_t round = 0, rank = 0;
        bool ok = colon != std::string::npos && colon > 0 && colon + 1 < item.size() && item.size() < 20;
        for (std::size_t i = 0; ok && i < item.size(); ++i) {
            if (i == colon) continue;
            ok = item[i] >= '0' && item[i] <= '9';
            (i < colon ? round : rank) = (i < colon ? round : rank) * 10 + static_cast<std::uint64_t>(item[i] - '0');
        }
        if (!ok)
            p.fail("dropped_clients", fmt::format("expected ROUND:RANK pairs separated by commas, got \"{}\"", given));
        if (round >= rounds || rank >= plan.dp)
            p.fail("dropped_clients",
                   fmt::format("{}: there are {} rounds of ranks 0 to {}", item, rounds, plan.dp - 1));
        plan.dropped[round].push_back(static_cast<std::uint32_t>(rank));
    }
    for (auto& d : plan.dropped) {
        std::sort(d.begin(), d.end());
        d.erase(std::unique(d.begin(), d.end()), d.end());
    }
}

bool LayerBuilder::is_client(std::uint32_t round, std::uint32_t rank) const {
    return std::binary_search(clients_[round].begin(), clients_[round].end(), rank);
}

bool LayerBuilder::on_time(std::uint32_t round, std::uint32_t rank) const {
    if (!is_client(round, rank)) return false;
    if (plan_.dropped.empty()) return true;
    const auto& late = plan_.dropped[round];
    return !std::binary_search(late.begin(), late.end(), rank);
}

void LayerBuilder::plan_model_moves() {
    // Round q's newcomers, in rank order, receive from round q - 1's clients in turn.
    moves_by_receiver_.assign(clients_.size(), {});
    moves_by_sender_.assign(clients_.size(), {});
    for (std::uint32_t q = 1; q < clients_.size(); ++q) {
        // The last round's clients whose updates were averaged hold the model (a dropped one's is stale).
        std::vector<std::uint32_t> last;
        for (const std::uint32_t r : clients_[q - 1])
            if (on_time(q - 1, r)) last.push_back(r);
        auto& moves = moves_by_receiver_[q];
        for (const std::uint32_t r : clients_[q])
            if (!on_time(q - 1, r)) moves.push_back({r, last[moves.size() % last.size()]});
        moves_by_sender_[q] = moves;
        std::sort(moves_by_sender_[q].begin(), moves_by_sender_[q].end(), [](const ModelMove& a, const ModelMove& b) {
            return a.from != b.from ? a.from < b.from : a.to < b.to;
        });
    }
}

}  // namespace clustersim::workloads
