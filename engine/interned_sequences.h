// Distinct sequences of 64-bit integers, each given a dense id in the order first seen: equal sequences get the
// same id, whatever produced them. The router keys what it keeps by these ids (a server's exit costs, a
// destination's entry costs), so that everything alike in those sequences shares one record.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/flat_map.h"
#include "engine/hash.h"

namespace clustersim::engine {

class InternedSequences {
public:
    static constexpr std::uint32_t none = UINT32_MAX;

    /// The id of `values`, added if it was not seen before.
    std::uint32_t intern(std::span<const std::int64_t> values) {
        std::uint64_t hash = splitmix64(values.size());
        for (const std::int64_t v : values) hash = hash_combine(hash, static_cast<std::uint64_t>(v));
        hash &= ~std::uint64_t{0} >> 1;  // (UINT64_MAX is the map's reserved key)
        // Hashes may collide: the sequences of one hash are chained, and compared whole.
        bool inserted = false;
        std::uint32_t& first = by_hash_.find_or_insert(hash, inserted);
        std::uint32_t id = inserted ? none : first, last = none;
        while (id != none && !std::ranges::equal(at(id), values)) {
            last = id;
            id = same_hash_[id];
        }
        if (id != none) return id;
        id = static_cast<std::uint32_t>(same_hash_.size());
        values_.insert(values_.end(), values.begin(), values.end());
        first_.push_back(static_cast<std::uint32_t>(values_.size()));
        same_hash_.push_back(none);
        (inserted ? first : same_hash_[last]) = id;
        return id;
    }
    /// The sequence of `id`.
    [[nodiscard]] std::span<const std::int64_t> at(std::uint32_t id) const {
        return {values_.data() + first_[id], first_[id + 1] - first_[id]};
    }
    [[nodiscard]] std::size_t size() const { return same_hash_.size(); }
    void clear() {
        values_.clear();
        first_.assign(1, 0);
        same_hash_.clear();
        by_hash_.clear();
    }

private:
    std::vector<std::int64_t> values_;      // sequence i: [first_[i], first_[i + 1])
    std::vector<std::uint32_t> first_{0};   //
    std::vector<std::uint32_t> same_hash_;  // by id: the next id of the same hash, or none
    FlatMap64<std::uint32_t> by_hash_;      // by hash: the first id with it
};

}  // namespace clustersim::engine
