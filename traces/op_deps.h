// The dependencies of a graph's ops besides stream order, kept only for the ops that have some: a bitmap of those
// ops (engine::BitRank) and their lists one after the other (CSR over them). Most ops have none: 1.1 M of the 35 M
// ops of an unfolded GPT-3 step on 1,024 GPUs (their stream order says the rest), where an offset for every op cost
// 4 bytes an op, 142 MB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/bit_rank.h"
#include "engine/huge_pages.h"
#include "engine/ids.h"

namespace clustersim::traces {

struct OpTag;
using OpId = engine::StrongId<OpTag>;

class OpDeps {
public:
    /// Appends the next op's dependencies (none: the op costs a bit).
    void append(std::span<const OpId> deps) {
        owners_.push_back(!deps.empty());
        if (deps.empty()) return;
        ids_.insert(ids_.end(), deps.begin(), deps.end());
        ends_.push_back(static_cast<std::uint32_t>(ids_.size()));
    }
    /// The dependencies of `op` (an op appended).
    [[nodiscard]] std::span<const OpId> of(OpId op) const {
        if (!owners_.contains(op.index())) return {};
        const std::uint32_t k = owners_.rank(op.index());
        const std::uint32_t begin = k == 0 ? 0 : ends_[k - 1];
        return {ids_.data() + begin, ids_.data() + ends_[k]};
    }
    /// Whether `op` has dependencies, and its place among the ops that have some (for arrays kept for those only).
    [[nodiscard]] bool has(OpId op) const { return owners_.contains(op.index()); }
    [[nodiscard]] std::uint32_t owner_index(OpId op) const { return owners_.rank(op.index()); }
    /// The ops that have dependencies.
    [[nodiscard]] std::uint32_t owner_count() const { return owners_.size(); }
    /// The ops appended.
    [[nodiscard]] std::size_t op_count() const { return owners_.ids(); }
    /// Every dependency, by op in op order (also for a page warmer to follow).
    [[nodiscard]] const std::vector<OpId>& ids() const { return ids_; }
    /// Keeps the dependencies of the first `ops` ops (the others are appended again).
    void truncate(std::size_t ops) {
        if (ops >= op_count()) return;
        const std::uint32_t kept = ops == 0 ? 0 : owners_.rank(ops);
        owners_.truncate(ops);
        ends_.resize(kept);
        ids_.resize(kept == 0 ? 0 : ends_.back());
    }
    void clear() { truncate(0); }
    /// Room for `ops` ops with `deps` dependencies in all, `owners` of them with some.
    void reserve(std::size_t ops, std::size_t owners, std::size_t deps) {
        owners_.reserve(ops);
        engine::reserve_huge(ends_, owners);
        engine::reserve_huge(ids_, deps);
    }
    /// Where each list ends, by op that has some (for a page warmer to follow, engine/page_warmer.h).
    [[nodiscard]] const std::vector<std::uint32_t>& ends() const { return ends_; }
    bool operator==(const OpDeps&) const = default;

private:
    engine::BitRank owners_;           // by op: whether it has dependencies
    std::vector<std::uint32_t> ends_;  // by op that has some: where its list ends in ids_ (begins at the last's end)
    std::vector<OpId> ids_;
};

}  // namespace clustersim::traces
