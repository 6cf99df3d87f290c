// The rank grid of a 4-D parallel plan: each rank's (tp, cp, dp, pp) coordinates under the plan's rank order
// (fastest dimension first, Megatron's tp-cp-ep-dp-pp by default, so a TP group is consecutive ranks and shares
// a node), and the members of each kind of group. Expert parallelism splits the cp x dp ranks of a (tp, pp)
// position into consecutive groups of ep; the expert-data-parallel group joins the ranks at one position of
// those groups.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "workloads/transformer/transformer_plan.h"

namespace clustersim::workloads {

struct GridCoord {
    std::array<std::uint32_t, 4> at{};  // by GridDim
    [[nodiscard]] std::uint32_t operator[](GridDim d) const { return at[static_cast<std::size_t>(d)]; }
    std::uint32_t& operator[](GridDim d) { return at[static_cast<std::size_t>(d)]; }
};

enum class GroupKind : std::uint8_t { tp, cp, dp_cp, pp, ep, expert_dp };

class RankGrid {
public:
    explicit RankGrid(const TransformerPlan& plan);
    [[nodiscard]] std::uint32_t size() const { return size_; }
    [[nodiscard]] std::uint32_t rank(const GridCoord& c) const;
    [[nodiscard]] GridCoord coord(std::uint32_t rank) const;
    /// The members of `rank`'s group of `kind`, in group order (for cp x dp: cp fastest).
    [[nodiscard]] std::vector<std::uint32_t> group(std::uint32_t rank, GroupKind kind) const;
    /// A stable index of `rank`'s group of `kind` among the groups of that kind (for names).
    [[nodiscard]] std::uint32_t group_index(std::uint32_t rank, GroupKind kind) const;

private:
    std::array<std::uint32_t, 4> extent_{}, stride_{};
    std::uint32_t ep_ = 1, size_ = 1;
};

}  // namespace clustersim::workloads
