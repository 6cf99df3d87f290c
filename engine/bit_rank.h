// A set of ids as a bitmap that counts its members below an id in constant time: one bit per id, and a count per
// 512 ids. For lists kept only for the few ids that have one, found by their member's rank: the replay's lists of
// dependents besides stream order, and the graph's dependencies (traces/op_deps.h), which 1.1 M of the 35 M ops of
// an unfolded GPT-3 step have, where an offset for every op cost 4 bytes an op. Built either at once (reset(),
// insert(), finish()) or id by id (push_back(), which keeps the counts as it goes).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace clustersim::engine {

class BitRank {
public:
    /// An empty set of ids in [0, n).
    void reset(std::size_t n) {
        words_.assign((n + 63) / 64, 0);
        block_counts_.clear();
        size_ = 0;
        ids_ = n;
    }
    void insert(std::size_t id) { words_[id / 64] |= std::uint64_t{1} << (id % 64); }
    /// Counts the members: call after the last insert and before rank() or size().
    void finish() {
        block_counts_.assign(words_.size() / words_per_block + 1, 0);
        std::uint32_t total = 0;
        for (std::size_t w = 0; w < words_.size(); ++w) {
            if (w % words_per_block == 0) block_counts_[w / words_per_block] = total;
            total += static_cast<std::uint32_t>(std::popcount(words_[w]));
        }
        size_ = total;
    }
    /// Appends id ids(), a member or not; the counts stay current (no finish() needed).
    void push_back(bool member) {
        if (ids_ % 64 == 0) {
            if (ids_ % (64 * words_per_block) == 0) block_counts_.push_back(size_);
            words_.push_back(0);
        }
        if (member) {
            words_.back() |= std::uint64_t{1} << (ids_ % 64);
            ++size_;
        }
        ++ids_;
    }
    /// Keeps the ids below `n` (at most ids()); the counts stay current.
    void truncate(std::size_t n) {
        if (n >= ids_) return;
        size_ = rank(n);
        ids_ = n;
        words_.resize((n + 63) / 64);
        if (n % 64 != 0) words_.back() &= (std::uint64_t{1} << (n % 64)) - 1;
        block_counts_.resize((n + 64 * words_per_block - 1) / (64 * words_per_block));
    }
    void reserve(std::size_t n) { words_.reserve((n + 63) / 64); }
    /// The ids the set is over: [0, ids()).
    [[nodiscard]] std::size_t ids() const { return ids_; }
    [[nodiscard]] bool contains(std::size_t id) const { return (words_[id / 64] >> (id % 64)) & 1; }
    /// The members below `id`.
    [[nodiscard]] std::uint32_t rank(std::size_t id) const {
        const std::size_t w = id / 64;
        std::uint32_t below = block_counts_[w / words_per_block];
        for (std::size_t k = w - w % words_per_block; k < w; ++k)
            below += static_cast<std::uint32_t>(std::popcount(words_[k]));
        return below + static_cast<std::uint32_t>(std::popcount(words_[w] & ((std::uint64_t{1} << (id % 64)) - 1)));
    }
    [[nodiscard]] std::uint32_t size() const { return size_; }
    /// Equal members over equal ids (however the counts were built).
    bool operator==(const BitRank& o) const { return ids_ == o.ids_ && words_ == o.words_; }

private:
    static constexpr std::size_t words_per_block = 8;
    std::vector<std::uint64_t> words_;
    std::vector<std::uint32_t> block_counts_;  // by block of 512 ids: the members before it
    std::uint32_t size_ = 0;
    std::size_t ids_ = 0;
};

}  // namespace clustersim::engine
