// A set of ids as a bitmap that counts its members below an id in constant time: one bit per id, and a count per
// 512 ids. For lists kept only for the few ids that have one, found by their member's rank: the replay's lists of
// dependents besides stream order, which 1.1 M of the 35 M ops of an unfolded GPT-3 step have, where an offset for
// every op cost 4 bytes an op (sim/replay/replay_engine.cpp).
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

private:
    static constexpr std::size_t words_per_block = 8;
    std::vector<std::uint64_t> words_;
    std::vector<std::uint32_t> block_counts_;  // by block of 512 ids: the members before it
    std::uint32_t size_ = 0;
};

}  // namespace clustersim::engine
