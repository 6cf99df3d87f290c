// Max-min fair rates by progressive filling (water-filling), restricted to the flows a change can affect: either
// the component of flows connected to the links touched since the last update (reference), or, by default, the
// flows whose max-min conditions the change breaks, found by filling and checking until none is broken. Repeatedly, the
// lowest water level fixes flows: either a link's fair share (residual capacity / unfixed flows), fixing all its
// unfixed flows, or a flow's own cap (its route's bottleneck); ties go to the flow cap, then to the lower link id, so
// the result is the same on every machine. Rates are exact where they can be and canonical where they cannot:
// residuals in integer rate units, a share within 1e-12 of the level just fixed taken as that level, and the flows
// at a link's level recomputed together, so that the same flows get the same rates to the bit whichever of them an
// update recomputes (classes or flows one by one). Cost: O((L + F * hops) log L + F log F) for a component of L
// links and F flows.
#include <algorithm>
#include <bit>
#include <cmath>
#include <queue>

#include "sim/network/flow_network.h"

namespace clustersim::sim {

using engine::Time;

namespace {
/// Two fair shares this close (relative) are one water level: rounding moves a share by about 1e-16 (the division)
/// plus 2^-32 bytes/s per flow fixed before (residuals are kept in rate units), and 1e-12 of a rate is under a
/// picosecond per second of transfer.
constexpr double same_level = 1e-12;

/// The fill's heap key: a share (or a cap) above a link's (or a flow's) id. A non-negative double's bits order as the
/// double does, and shares are never negative or NaN, so keys compare as (value, id) in one integer comparison.
template <typename Key>
Key share_key(double value, std::uint32_t id) {
    return (Key{std::bit_cast<std::uint64_t>(value)} << 32) | id;
}
}  // namespace

void FlowNetwork::select_dirty_links() {
    ++epoch_;
    component_links_.clear();
    component_flows_.clear();
    for (const std::uint32_t l : dirty_links_) {
        if (link_fill_[l].mark == epoch_) continue;
        link_fill_[l].mark = epoch_;
        component_links_.push_back(l);
    }
    dirty_links_.clear();
}

void FlowNetwork::collect_component() {
    // Every flow on a touched link is recomputed; from there the component grows only through links that can
    // bind (see flow_network.h).
    select_dirty_links();
    for (std::size_t i = 0; i < component_links_.size(); ++i) {
        for (const auto [f, place, count] : links_[component_links_[i]].flows()) {
            if (share_[f].mark == epoch_) continue;
            select_flow(f, [&](LinkFill& lf, std::uint32_t l, std::uint32_t) {
                if (lf.mark == epoch_ || !may_bind(l)) return;
                lf.mark = epoch_;
                component_links_.push_back(l);
            });
        }
    }
}

void FlowNetwork::select_affected_flows() {
    // Start from every flow on a touched link; fill; then add any other flow whose max-min conditions the new
    // rates break on a link they share (see flow_network.h), and fill again, until none is broken.
    ++epoch_;
    component_links_.clear();
    component_flows_.clear();
    auto add_link = [&](std::uint32_t l) {
        if (link_fill_[l].mark == epoch_) return;
        link_fill_[l].mark = epoch_;
        component_links_.push_back(l);
    };
    // A link f has to itself (no other flow on it) fixes nothing f's least such link does not: its share stays until
    // f is fixed, and one with a higher key would be popped after f was fixed (the fill's rule for links with one
    // selected flow, max_min_fair.cpp). Only the least joins the component, unless the update touched the others;
    // those the fill would leave out (residual >= demand, the same doubles) are not candidates.
    auto add_flow = [&](std::uint32_t f) {
        if (share_[f].mark == epoch_) return;
        const std::uint32_t weight = share_[f].weight;
        const double demand = share_[f].cap * weight;
        ShareKey least = ~ShareKey{0};
        select_flow(f, [&](const LinkFill& lf, std::uint32_t l, std::uint32_t count) {
            if (lf.mark == epoch_) return;
            if (links_[l].flow_count() != 1) {
                add_link(l);
                return;
            }
            // (f's part is all of the rate sum: the residual is the capacity)
            const double residual = rate_of_units(links_[l].headroom + rate_units(share_[f].rate) * count);
            if (residual >= demand * count) return;
            const double share = residual / static_cast<double>(weight * count);
            least = std::min(least, share_key<ShareKey>(share, l));
        });
        if (least != ~ShareKey{0}) add_link(static_cast<std::uint32_t>(least));
    };
    for (const std::uint32_t l : dirty_links_) add_link(l);
    dirty_links_.clear();
    const std::size_t touched = component_links_.size();
    // Flows attached in this instant have no rate yet.
    for (const std::uint32_t f : attached_) {
        if (flows_[f].draining) add_flow(f);
    }
    for (std::size_t i = 0; i < touched; ++i) {
        const std::uint32_t l = component_links_[i];
        // A touched link whose flows' caps fit in its capacity limits none of them: a flow held below its cap is
        // held elsewhere, and one that was held here (before a flow left) is found freed by the check below.
        if (!may_bind(l) || links_[l].held_count == 0) continue;
        for (const LinkEntry& e : links_[l].flows()) {
            // Only the flows this link held below their caps: they may rise if flows left it. Every other flow on it
            // is held elsewhere (or at its cap) and keeps its rate unless the new rates break its conditions, which
            // the check below finds: a newcomer's share below its level on a saturated link (squeezed), or its own
            // bottleneck freed by a flow that rose. Starting from all the link's flows gave the same rates (the
            // max-min allocation is unique) for several times the fill's work on busy links.
            if (share_[e.flow].mark != epoch_ && held_by(e, l)) add_flow(e.flow);
        }
    }
    while (true) {
        fill();
        const std::size_t before = component_flows_.size();
        // Only links where something changed can break another flow's conditions: the touched ones, and those
        // of selected flows whose rate or limiting link the fill changed. Most of them have nothing to squeeze
        // (the fill fixed no flow there) and hold no flow left out of the selection: those are passed over
        // without reading their flows.
        ++check_stamp_;
        check_links_.clear();
        for (std::size_t i = 0; i < touched; ++i) check_link(component_links_[i]);
        for (const std::uint32_t f : component_flows_) {
            if (new_limit_[f] != UINT32_MAX) {
                double& least = check_of(new_limit_[f]).min_level;
                least = std::min(least, new_rate_[f] / share_[f].weight);
            }
            if (new_rate_[f] == share_[f].rate && new_limit_[f] == share_[f].limiting_link) continue;
            for_each_link(f, [&](std::uint32_t l, std::uint32_t) {
                if (link_fill_[l].mark == epoch_) check_link(l);  // (a link f has to itself: nothing to check)
            });
        }
        for (std::size_t i = 0; i < check_links_.size(); ++i) {
            const std::uint32_t l = check_links_[i];
            const double min_bottleneck_level = link_check_[l].min_level;
            const bool held_out = link_fill_[l].held_out;  // held, not selected
            if (min_bottleneck_level == INFINITY && !held_out) continue;
            double total = 0, max_level = 0;
            // The flows at the level the fill fixed here, selected or not: the sum of their rates in rate units,
            // their weight, and how many the update did not select.
            const bool fixed_here = min_bottleneck_level != INFINITY;
            RateUnits tied_units = 0;
            std::uint32_t tied_weight = 0, tied_out = 0;
            for (const auto [f, place, count] : links_[l].flows()) {
                const bool selected = share_[f].mark == epoch_;
                const double rate = selected ? new_rate_[f] : share_[f].rate;
                total += rate * count;
                max_level = std::max(max_level, rate / share_[f].weight);
                if (!fixed_here || !at_level(rate, share_[f].weight, min_bottleneck_level)) continue;
                tied_units += rate_units(rate) * count;
                tied_weight += share_[f].weight * count;
                tied_out += selected ? 0 : 1;
            }
            const bool tie_broken = tied_out > 0 && align_tied_flows(l, min_bottleneck_level, tied_units, tied_weight);
            const bool saturated = total >= links_[l].capacity * (1 - 1e-9);
            for (const LinkEntry& e : links_[l].flows()) {
                const std::uint32_t g = e.flow;
                if (share_[g].mark == epoch_) continue;
                const FlowShare& flow = share_[g];
                const double level = flow.rate / flow.weight;
                // g's bottleneck is here but it no longer binds g (slack, or someone above g): g may rise. A class
                // held below its cap has a bottleneck per member: any of its links may be one.
                // (The test of the link first: the class's bottleneck lookup only where the link lets g rise.)
                const bool may_rise = !saturated || max_level > level * (1 + 1e-9);
                const bool freed = may_rise && held_by(e, l);
                // A flow held here below g's level: g must come down to share.
                const bool squeezed = saturated && min_bottleneck_level < level * (1 - 1e-9);
                const bool tied = tie_broken && at_level(flow.rate, flow.weight, min_bottleneck_level);
                if (freed || squeezed || tied) add_flow(g);
            }
        }
        if (component_flows_.size() == before) return;
    }
}

bool FlowNetwork::at_level(double rate, std::uint32_t weight, double level) {
    return std::abs(rate / weight - level) <= level * same_level;
}

bool FlowNetwork::align_tied_flows(std::uint32_t link, double level, RateUnits tied_units, std::uint32_t tied_weight) {
    // Flows at one level on a link have one rate to the bit whichever of them an update recomputed (a class
    // recomputes all its members, flows one by one only some, and a rate kept from an earlier update was rounded
    // there): the link's capacity less every other flow's rate, shared by weight, as the fill computes it when it
    // recomputes them all. Selected flows with another rate take it; one left out with another rate is reported, so
    // that those left out are recomputed with the others.
    const double canonical = rate_of_units(link_fill_[link].residual + tied_units) / tied_weight;
    bool left_out_differs = false;
    for (const auto [f, place, count] : links_[link].flows()) {
        const bool selected = share_[f].mark == epoch_;
        const double rate = selected ? new_rate_[f] : share_[f].rate;
        const double share = canonical * share_[f].weight;
        if (!at_level(rate, share_[f].weight, level) || rate == share) continue;
        if (selected) {
            new_rate_[f] = share;  // (the fill's rate, but for rounding)
        } else {
            left_out_differs = true;
        }
    }
    return left_out_differs;
}

void FlowNetwork::fill() {
    // Progressive filling over the selected flows, with two kinds of constraint: the selected links (fair share
    // = residual / unfixed weight; flows not selected keep their rates and take their part of the capacity) and
    // each flow's own cap. The lowest water level fixes first.
    // The heap of (fair share, link), smallest first, then lowest link id: each pair packed in one 128-bit key
    // (a non-negative double's bits order as the double does, and shares are never negative or NaN), so a
    // comparison is two integer compares without a branch. A link is in the heap once, so keys are distinct and
    // the minimum popped is the same whatever the heap's layout.
    std::vector<ShareKey>& shares = share_heap_;
    shares.clear();
    const auto key = [](double value, std::uint32_t id) {  // (a share and its link, or a cap and its flow)
        return share_key<ShareKey>(value, id);
    };
    const auto share_of = [](ShareKey k) { return std::bit_cast<double>(static_cast<std::uint64_t>(k >> 32)); };
    const auto id_of = [](ShareKey k) { return static_cast<std::uint32_t>(k); };
    // A binary min-heap written out: sift_down also replaces the top with a larger key in one pass.
    const auto sift_down = [&](std::size_t i) {
        const std::size_t n = shares.size();
        const ShareKey moving = shares[i];
        while (true) {
            std::size_t child = 2 * i + 1;
            if (child >= n) break;
            if (child + 1 < n && shares[child + 1] < shares[child]) ++child;
            if (!(shares[child] < moving)) break;
            shares[i] = shares[child];
            i = child;
        }
        shares[i] = moving;
    };
    const auto pop = [&] {
        shares.front() = shares.back();
        shares.pop_back();
        if (!shares.empty()) sift_down(0);
    };
    // The selected flows' sums on each link were taken as they were selected (select_flow); the other flows hold the
    // rest of the link's rate sum (less LinkState::headroom) and keep it.
    // Links with one selected flow are told apart (below) only in large components: a class's route, whose
    // members' own links are most of it. With a few lone flows the heap is small and the tally would cost more.
    const bool by_sole = component_links_.size() >= 256;
    // A link with one selected flow keeps its fair share until that flow is fixed (the others on it hold their
    // rates), and only that flow's fixing changes it: of such links, only each flow's least key can ever be the
    // heap's minimum while the flow is unfixed; the others would be popped after it, all their flows fixed. So
    // only the least goes in the heap (the others left out, as if they could not bind): the same flows fixed at
    // the same levels, in the same order, over far fewer keys (a class's members' own links are most of its route).
    constexpr ShareKey no_key = ~ShareKey{0};
    sole_least_.assign(by_sole ? component_flows_.size() : 0, no_key);
    for (std::size_t i = 0; i < component_links_.size(); ++i) {
        const std::uint32_t l = component_links_[i];
        LinkFill& lf = sums_of(l);
        // (Read here, with the headroom in the same line: the check after the fill reads only this line.)
        lf.held_out = links_[l].held_count != lf.held ? 1 : 0;
        // (A residual may go below 0 by rounding, at most one unit per flow; rate_of_units reads it as 0.)
        const RateUnits units = links_[l].headroom + lf.selected;
        const double residual = rate_of_units(units);
        // A link whose residual covers the caps of all its selected flows never fixes one: fixing a flow takes at
        // most its cap from the residual, so its fair share stays at or above the least cap of its unfixed flows,
        // and ties go to the cap. Left out (unfixed 0), it costs the heap nothing (and its residual is not read).
        lf.unfixed = residual >= lf.demand ? 0 : lf.weight;
        if (lf.unfixed == 0) continue;
        lf.residual = units;
        const ShareKey k = key(residual / lf.unfixed, l);
        if (by_sole && lf.sole != 0 && lf.sole != LinkFill::many) {
            ShareKey& least = sole_least_[lf.sole - 1];
            least = std::min(least, k);
            lf.unfixed = 0;  // (restored below for the least)
            continue;
        }
        shares.push_back(k);
    }
    for (const ShareKey least : sole_least_) {
        if (least == no_key) continue;
        const std::uint32_t l = id_of(least);
        link_fill_[l].unfixed = link_fill_[l].weight;
        shares.push_back(least);
    }
    for (const std::uint32_t f : component_flows_) fixed_[f] = 0;
    // Fixes flow f at water level `level` per share: its rate is level x weight, taken from its links' residuals
    // (which the check after the fill reads).
    auto fix = [&](std::uint32_t f, double level, std::uint32_t at_link) {
        const std::uint32_t weight = share_[f].weight;
        const double rate = level * weight;
        const RateUnits units = rate_units(rate);
        fixed_[f] = 1;
        new_rate_[f] = rate;
        new_limit_[f] = at_link;
        for_each_link(f, [&](std::uint32_t o, std::uint32_t count) {
            // Outside the component, or left out above: cannot bind.
            if (link_fill_[o].mark != epoch_ || link_fill_[o].unfixed == 0) return;
            link_fill_[o].residual -= units * count;
            link_fill_[o].unfixed -= weight * count;
        });
    };
    if (component_flows_.size() == 1) {
        // One flow (often a class alone on its links): its level is the least fair share of its links, or its cap
        // if that is lower; the same choice, and ties, as the filling below would make.
        const std::uint32_t f = component_flows_.front();
        const ShareKey least = shares.empty() ? 0 : *std::min_element(shares.begin(), shares.end());
        const bool capped = shares.empty() || share_[f].cap <= share_of(least);
        fix(f, capped ? share_[f].cap : share_of(least), capped ? UINT32_MAX : id_of(least));
        return;
    }
    for (std::size_t i = shares.size() / 2; i-- > 0;) sift_down(i);
    // Sorted as (cap, slot) keys side by side: comparing through share_ missed the cache on large components.
    by_cap_.clear();
    for (const std::uint32_t f : component_flows_) by_cap_.push_back(key(share_[f].cap, f));  // caps: >= 0, not NaN
    std::sort(by_cap_.begin(), by_cap_.end());
    std::size_t next_cap = 0;
    double level = 0;  // the water level of the last flow fixed
    // Lazy keys: fixing a flow at the lowest level only raises the fair share of its other links, so every key
    // in the heap is a lower bound of its link's share. A popped key below the current share is pushed back with
    // the current one; a key equal to it is the true minimum. Each link is in the heap once.
    while (true) {
        while (next_cap < by_cap_.size() && fixed_[id_of(by_cap_[next_cap])]) ++next_cap;
        if (next_cap == by_cap_.size()) break;  // every flow fixed
        while (!shares.empty()) {
            const std::uint32_t link = id_of(shares.front());
            if (link_fill_[link].unfixed == 0) {
                pop();  // all its flows fixed through other links
                continue;
            }
            const double current = rate_of_units(link_fill_[link].residual) / link_fill_[link].unfixed;
            if (share_of(shares.front()) == current) break;
            shares.front() = key(current, link);  // a key only rises (but for rounding): sifted down in place
            sift_down(0);
        }
        const std::uint32_t capped = id_of(by_cap_[next_cap]);
        if (shares.empty() || share_[capped].cap <= share_of(shares.front())) {
            level = share_[capped].cap;
            fix(capped, level, UINT32_MAX);
            continue;
        }
        // A link at the level just fixed, but for rounding, fixes its flows at that level: in exact arithmetic
        // its share is the level (flows fixed at a level leave their other links' shares at it or above), and the
        // rounding depends on how many of its flows were fixed before, through other links. So flows alike end
        // at the same rate however the fill reached them: a class at once, or its members one by one.
        double share = share_of(shares.front());
        if (at_level(share, 1, level)) share = level;
        level = share;
        const std::uint32_t link = id_of(shares.front());
        pop();
        for (const auto [f, place, count] : links_[link].flows()) {
            // Only selected flows: a flow held at its rate (counted in the link's residual above) keeps it, and
            // its fixed_ mark may be stale (flows rated at their caps never pass through a fill).
            if (share_[f].mark == epoch_ && !fixed_[f]) fix(f, share, link);
        }
    }
}

void FlowNetwork::recompute_rates() {
    ++rate_updates_;
    if (!starting_.empty()) form_classes();
    if (options_.incremental && !solve_needed_) {
        ++updates_at_caps_;
        rate_flows_at_caps();
    } else {
        solve();
    }
    attached_.clear();
    solve_needed_ = false;
    flows_reassigned_ += component_flows_.size();
    update_pending_ = false;  // (attaching classes and splitting them marked links dirty: handled above)
    apply_rates();
}

void FlowNetwork::rate_flows_at_caps() {
    // Every link touched since the last update limited none of its flows before, and limits none now: only the
    // new flows need rates, their caps (what the fill gives a flow whose links are all left out), and no other
    // flow's conditions changed.
    select_dirty_links();
    for (const std::uint32_t f : attached_) {
        if (!flows_[f].draining || share_[f].mark == epoch_) continue;
        share_[f].mark = epoch_;
        component_flows_.push_back(f);
        new_rate_[f] = share_[f].cap * share_[f].weight;
        new_limit_[f] = UINT32_MAX;
        // A class at its cap: nothing holds any member.
        if (share_[f].group != no_class) classes_[share_[f].group].next_limit.clear();
    }
}

void FlowNetwork::solve() {
    round_dirty_.assign(dirty_links_.begin(), dirty_links_.end());
    while (true) {
        if (options_.incremental) {
            select_affected_flows();
        } else {
            collect_component();
            fill();
        }
        if (!split_inexact_classes()) break;
        // Again, from the links of this update and those of the split classes, none of the rates above applied.
        dirty_links_.insert(dirty_links_.end(), round_dirty_.begin(), round_dirty_.end());
        round_dirty_.assign(dirty_links_.begin(), dirty_links_.end());
    }
}

void FlowNetwork::apply_rates() {
    const Time now = sim_.now();
    for (const std::uint32_t f : component_flows_) {
        FlowState& flow = flows_[f];
        FlowShare& share = share_[f];
        const double rate = new_rate_[f];
        const bool grouped = share.group != no_class;
        if (rate == share.rate && sim_.armed(flow.timer)) {
            // Same rate: its finish time still holds. A new limiting link only changes whom later delay is
            // charged to.
            if (share.limiting_link != new_limit_[f] || grouped) {
                account_progress(f, now);
                set_limiting_link(f, new_limit_[f]);
                if (grouped) adopt_limits(share.group);
            }
            continue;
        }
        account_progress(f, now);
        if (grouped) adopt_limits(share.group);
        if (rate != share.rate) {
            ++flows_rerated_;
            settle(f, now);
            set_share_rate(f, rate);
        }
        set_limiting_link(f, new_limit_[f]);
        // (The same rate, not armed: a class's member going on alone, due when the class was.)
        const Time due = flow.rate_since + engine::transfer_time(flow.remaining, rate);
        sim_.arm(flow.timer, std::max(now, due), to_u16(EventKind::flow_drained));
    }
    if (options_.record_link_utilization) record_utilization_of_component();
}

void FlowNetwork::record_utilization_of_component() {
    // Every link of a reassigned flow may have changed its total, including links outside the component.
    const Time now = sim_.now();
    touched_links_.clear();
    for (const std::uint32_t f : component_flows_) {
        for_each_link(f, [&](std::uint32_t l, std::uint32_t) {
            if (utilization_mark_[l] == epoch_) return;
            utilization_mark_[l] = epoch_;
            touched_links_.push_back(l);
        });
    }
    for (const std::uint32_t l : component_links_) {
        if (utilization_mark_[l] == epoch_) continue;  // a link a drained flow left
        utilization_mark_[l] = epoch_;
        touched_links_.push_back(l);
    }
    for (const std::uint32_t l : touched_links_) {
        const double rate = rate_of_units(capacity_units(l) - links_[l].headroom);
        if (rate == utilization_.rate(l)) continue;  // (its span goes on: no step, and its tap's entry unread)
        if (!link_taps_.empty() && link_taps_[l].tap != no_tap) {
            TapRecord& tap = taps_[link_taps_[l].tap];
            if (tap.valid && tap.steps.size() < network::max_tap_steps) {
                tap.steps.push_back({now, l, rate});
            } else if (tap.valid) {
                spoil_tap(link_taps_[l].tap);  // (a record past its budget: the caller runs as flows next time)
            }
        }
        utilization_.set_rate(l, now, rate);
    }
}

}  // namespace clustersim::sim
