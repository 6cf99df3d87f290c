// Rank <-> grid coordinates and group membership.
#include "workloads/transformer/rank_grid.h"

namespace clustersim::workloads {

namespace {
constexpr std::size_t idx(GridDim d) { return static_cast<std::size_t>(d); }
}  // namespace

RankGrid::RankGrid(const TransformerPlan& plan) : ep_(plan.ep) {
    extent_[idx(GridDim::tp)] = plan.tp;
    extent_[idx(GridDim::cp)] = plan.cp;
    extent_[idx(GridDim::dp)] = plan.dp;
    extent_[idx(GridDim::pp)] = plan.pp;
    std::uint32_t stride = 1;
    for (const GridDim d : plan.rank_order) {
        stride_[idx(d)] = stride;
        stride *= extent_[idx(d)];
    }
    size_ = stride;
}

std::uint32_t RankGrid::rank(const GridCoord& c) const {
    std::uint32_t r = 0;
    for (std::size_t k = 0; k < 4; ++k) r += c.at[k] * stride_[k];
    return r;
}

GridCoord RankGrid::coord(std::uint32_t rank) const {
    GridCoord c;
    for (std::size_t k = 0; k < 4; ++k) c.at[k] = rank / stride_[k] % extent_[k];
    return c;
}

std::vector<std::uint32_t> RankGrid::group(std::uint32_t rank, GroupKind kind) const {
    const GridCoord c = coord(rank);
    std::vector<std::uint32_t> out;
    auto along = [&](GridDim d) {
        GridCoord x = c;
        for (std::uint32_t i = 0; i < extent_[idx(d)]; ++i) {
            x[d] = i;
            out.push_back(this->rank(x));
        }
    };
    // cp x dp positions, cp fastest: x = cp + cp_extent * dp.
    const std::uint32_t cps = extent_[idx(GridDim::cp)];
    const std::uint32_t x = c[GridDim::cp] + cps * c[GridDim::dp];
    auto at_x = [&](std::uint32_t pos) {
        GridCoord y = c;
        y[GridDim::cp] = pos % cps;
        y[GridDim::dp] = pos / cps;
        out.push_back(this->rank(y));
    };
    const std::uint32_t positions = cps * extent_[idx(GridDim::dp)];
    switch (kind) {
        case GroupKind::tp:
            along(GridDim::tp);
            break;
        case GroupKind::cp:
            along(GridDim::cp);
            break;
        case GroupKind::pp:
            along(GridDim::pp);
            break;
        case GroupKind::dp_cp:
            for (std::uint32_t pos = 0; pos < positions; ++pos) at_x(pos);
            break;
        case GroupKind::ep:
            for (std::uint32_t k = 0; k < ep_; ++k) at_x(x / ep_ * ep_ + k);
            break;
        case GroupKind::expert_dp:
            for (std::uint32_t pos = x % ep_; pos < positions; pos += ep_) at_x(pos);
            break;
    }
    return out;
}

std::uint32_t RankGrid::group_index(std::uint32_t rank, GroupKind kind) const {
    // The group's smallest member identifies it; numbering groups by it keeps names stable and unique.
    const auto members = group(rank, kind);
    std::uint32_t first = members.front();
    for (const auto m : members) first = std::min(first, m);
    return first;
}

}  // namespace clustersim::workloads
