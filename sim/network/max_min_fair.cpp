// Max-min fair rates by progressive filling (water-filling), restricted to the component of flows connected to
// the links touched since the last update. Repeatedly, the lowest water level fixes flows: either a link's fair
// share (residual capacity / unfixed flows), fixing all its unfixed flows, or a flow's own cap (its route's
// bottleneck); ties go to the flow cap, then to the lower link id, so the result is the same on every machine.
// Cost: O((L + F * hops) log L + F log F) for a component of L links and F flows.
#include <algorithm>
#include <queue>

#include "sim/network/flow_network.h"

namespace clustersim::sim {

using engine::Time;

void FlowNetwork::collect_component() {
    ++epoch_;
    component_links_.clear();
    component_flows_.clear();
    // Every flow on a touched link is recomputed; from there the component grows only through links that can
    // bind (see flow_network.h).
    for (const std::uint32_t l : dirty_links_) {
        if (link_mark_[l] == epoch_) continue;
        link_mark_[l] = epoch_;
        component_links_.push_back(l);
    }
    dirty_links_.clear();
    for (std::size_t i = 0; i < component_links_.size(); ++i) {
        for (const std::uint32_t f : link_flows_[component_links_[i]]) {
            if (flow_mark_[f] == epoch_) continue;
            flow_mark_[f] = epoch_;
            component_flows_.push_back(f);
            for (const topo::LinkId l : flows_[f].route) {
                if (link_mark_[l.index()] == epoch_ || !can_bind(l.value)) continue;
                link_mark_[l.index()] = epoch_;
                component_links_.push_back(l.value);
            }
        }
    }
}

void FlowNetwork::recompute_rates() {
    update_pending_ = false;
    ++rate_updates_;
    collect_component();
    flows_reassigned_ += component_flows_.size();

    // Progressive filling with two kinds of constraint: links of the component (fair share = residual /
    // unfixed flows) and each flow's own cap. The lowest water level fixes first.
    using Share = std::pair<double, std::uint32_t>;  // (fair share, link): smallest first, then lowest link id
    std::priority_queue<Share, std::vector<Share>, std::greater<>> shares;
    for (const std::uint32_t l : component_links_) {
        residual_[l] = capacity_[l];
        unfixed_[l] = link_weight_[l];
        if (unfixed_[l] > 0) shares.emplace(residual_[l] / unfixed_[l], l);
    }
    for (const std::uint32_t f : component_flows_) fixed_[f] = 0;
    by_cap_.assign(component_flows_.begin(), component_flows_.end());
    std::sort(by_cap_.begin(), by_cap_.end(), [this](std::uint32_t a, std::uint32_t b) {
        return flows_[a].cap != flows_[b].cap ? flows_[a].cap < flows_[b].cap : a < b;
    });
    // Fixes flow f at water level `level` per share: its rate is level x weight.
    auto fix = [&](std::uint32_t f, double level, std::uint32_t at_link) {
        const std::uint32_t weight = flows_[f].weight;
        const double rate = level * weight;
        fixed_[f] = 1;
        new_rate_[f] = rate;
        new_limit_[f] = at_link;
        for (const topo::LinkId other : flows_[f].route) {
            const std::uint32_t o = other.value;
            if (link_mark_[o] != epoch_) continue;  // outside the component: cannot bind
            residual_[o] = std::max(0.0, residual_[o] - rate);
            unfixed_[o] -= weight;
        }
    };
    std::size_t next_cap = 0;
    // Lazy keys: fixing a flow at the lowest level only raises the fair share of its other links, so every key
    // in the heap is a lower bound of its link's share. A popped key below the current share is pushed back with
    // the current one; a key equal to it is the true minimum. Each link is in the heap once.
    while (true) {
        while (!shares.empty()) {
            const auto [share, link] = shares.top();
            if (unfixed_[link] == 0) {
                shares.pop();  // all its flows fixed through other links
                continue;
            }
            const double current = residual_[link] / unfixed_[link];
            if (share == current) break;
            shares.pop();
            shares.emplace(current, link);
        }
        while (next_cap < by_cap_.size() && fixed_[by_cap_[next_cap]]) ++next_cap;
        if (next_cap == by_cap_.size()) break;  // every flow fixed
        const std::uint32_t capped = by_cap_[next_cap];
        if (shares.empty() || flows_[capped].cap <= shares.top().first) {
            fix(capped, flows_[capped].cap, UINT32_MAX);
            continue;
        }
        const auto [share, link] = shares.top();
        shares.pop();
        for (const std::uint32_t f : link_flows_[link]) {
            if (!fixed_[f]) fix(f, share, link);
        }
    }

    const Time now = sim_.now();
    for (const std::uint32_t f : component_flows_) {
        FlowState& flow = flows_[f];
        const double rate = new_rate_[f];
        if (rate == flow.rate && sim_.armed(flow.timer)) continue;  // same rate: its finish time still holds
        account_progress(flow, now);
        ++flows_rerated_;
        flow.rate = rate;
        flow.limiting_link = new_limit_[f];
        sim_.arm(flow.timer, now + engine::transfer_time(flow.remaining, rate), to_u16(EventKind::flow_drained));
    }
    if (options_.record_link_utilization) record_utilization_of_component();
}

void FlowNetwork::record_utilization_of_component() {
    // Every link of a reassigned flow may have changed its total, including links outside the component.
    const Time now = sim_.now();
    touched_links_.clear();
    for (const std::uint32_t f : component_flows_) {
        for (const topo::LinkId l : flows_[f].route) {
            if (utilization_mark_[l.index()] == epoch_) continue;
            utilization_mark_[l.index()] = epoch_;
            touched_links_.push_back(l.value);
        }
    }
    for (const std::uint32_t l : component_links_) {
        if (utilization_mark_[l] == epoch_) continue;  // a link a drained flow left
        utilization_mark_[l] = epoch_;
        touched_links_.push_back(l);
    }
    std::sort(touched_links_.begin(), touched_links_.end());
    for (const std::uint32_t l : touched_links_) {
        double total = 0;
        for (const std::uint32_t f : link_flows_[l]) total += flows_[f].rate;
        auto& steps = utilization_[l];
        if (!steps.empty() && steps.back().at == now) {
            steps.back().rate_bytes_per_s = total;
            if (steps.size() >= 2 && steps[steps.size() - 2].rate_bytes_per_s == total) steps.pop_back();
        } else if (steps.empty() ? total != 0 : steps.back().rate_bytes_per_s != total) {
            steps.push_back(UtilizationStep{now, total});
        }
    }
}

}  // namespace clustersim::sim
