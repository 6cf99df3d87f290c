// A set of ids as a bitmap that counts its members below an id in constant time: one bit per id, and a count per
// 64 ids (a word's: one popcount per rank(), 12 bytes per 64 ids; a count per 512 ids took up to 8, and without the
// POPCNT instruction in the baseline x86-64 build each is a library call). For lists kept only for the few ids that
// have one, found by their member's rank: the replay's lists of dependents besides stream order, and the graph's
// dependencies (traces/op_deps.h), which 1.1 M of the 35 M ops of an unfolded GPT-3 step have, where an offset for
// every op cost 4 bytes an op. Built either at once (reset(), insert(), finish()) or id by id (push_back(), which keeps
// the counts as it goes).
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
        word_counts_.clear();
        size_ = 0;
        ids_ = n;
    }
    void insert(std::size_t id) { words_[id / 64] |= std::uint64_t{1} << (id % 64); }
    /// Counts the members: call after the last insert and before rank() or size().
    void finish() {
        word_counts_.assign(words_.size() + 1, 0);
        std::uint32_t total = 0;
        for (std::size_t w = 0; w < words_.size(); ++w) {
            word_counts_[w] = total;
            total += count(words_[w]);
        }
        size_ = total;
    }
    /// Appends id ids(), a member or not; the counts stay current (no finish() needed).
    void push_back(bool member) {
        if (ids_ % 64 == 0) {
            word_counts_.push_back(size_);
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
        word_counts_.resize((n + 63) / 64);
    }
    void reserve(std::size_t n) {
        words_.reserve((n + 63) / 64);
        word_counts_.reserve((n + 63) / 64 + 1);
    }
    /// The ids the set is over: [0, ids()).
    [[nodiscard]] std::size_t ids() const { return ids_; }
    [[nodiscard]] bool contains(std::size_t id) const { return (words_[id / 64] >> (id % 64)) & 1; }
    /// The members below `id`.
    [[nodiscard]] std::uint32_t rank(std::size_t id) const {
        const std::size_t w = id / 64;
        return word_counts_[w] + count(words_[w] & ((std::uint64_t{1} << (id % 64)) - 1));
    }
    [[nodiscard]] std::uint32_t size() const { return size_; }
    /// Equal members over equal ids (however the counts were built).
    bool operator==(const BitRank& o) const { return ids_ == o.ids_ && words_ == o.words_; }

private:
    /// The bits set in `x`: the POPCNT instruction where the build has it, else a few shifts and a multiply (the
    /// baseline x86-64 build has no POPCNT, and std::popcount is then a library call).
    static std::uint32_t count(std::uint64_t x) {
#if defined(__POPCNT__)
        return static_cast<std::uint32_t>(std::popcount(x));
#else
        x -= (x >> 1) & 0x5555555555555555ULL;
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
        return static_cast<std::uint32_t>((x * 0x0101010101010101ULL) >> 56);
#endif
    }
    std::vector<std::uint64_t> words_;
    std::vector<std::uint32_t> word_counts_;  // by word of 64 ids: the members before it
    std::uint32_t size_ = 0;
    std::size_t ids_ = 0;
};

}  // namespace clustersim::engine
