// A map from 64-bit keys to small values in one flat array: open addressing, linear probing, backward-shift
// deletion (no tombstones), grown at half load. For hot paths that look up by id (no allocation per entry, one
// cache line per hit where std::unordered_map chases a node pointer). Never iterated, so its layout, which depends
// on the hash, never reaches a result. The key UINT64_MAX is reserved.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/hash.h"

namespace clustersim::engine {

template <class Value>
class FlatMap64 {
public:
    /// The value of `key`, inserted (value-initialized) if absent; `inserted` says which. The reference lasts until
    /// the next insert or erase.
    Value& find_or_insert(std::uint64_t key, bool& inserted) {
        if ((size_ + 1) * 2 > entries_.size()) grow();
        std::size_t i = slot_of(key);
        while (entries_[i].key != empty && entries_[i].key != key) i = (i + 1) & mask_;
        inserted = entries_[i].key == empty;
        if (inserted) {
            entries_[i] = {key, Value{}};
            ++size_;
        }
        return entries_[i].value;
    }
    /// The value of `key`, or null.
    Value* find(std::uint64_t key) {
        if (entries_.empty()) return nullptr;
        for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
            if (entries_[i].key == key) return &entries_[i].value;
            if (entries_[i].key == empty) return nullptr;
        }
    }
    void erase(std::uint64_t key) {
        if (entries_.empty()) return;
        std::size_t i = slot_of(key);
        while (entries_[i].key != key) {
            if (entries_[i].key == empty) return;
            i = (i + 1) & mask_;
        }
        // Backward shift: move later entries of the probe run into the hole, so lookups never need tombstones.
        for (std::size_t j = (i + 1) & mask_; entries_[j].key != empty; j = (j + 1) & mask_) {
            const std::size_t home = slot_of(entries_[j].key);
            // Entry j may fill hole i when its home is not cyclically in (i, j].
            if (((j - home) & mask_) >= ((j - i) & mask_)) {
                entries_[i] = entries_[j];
                i = j;
            }
        }
        entries_[i].key = empty;
        --size_;
    }
    [[nodiscard]] std::size_t size() const { return size_; }
    /// Frees the memory.
    void clear() {
        std::vector<Entry>().swap(entries_);
        size_ = 0;
        mask_ = 0;
    }

private:
    static constexpr std::uint64_t empty = UINT64_MAX;
    struct Entry {  // key and value side by side: one cache line per hit
        std::uint64_t key = empty;
        Value value{};
    };
    // Mixed: dense keys as they are would cluster (several rings' live windows overlap in slot space).
    [[nodiscard]] std::size_t slot_of(std::uint64_t key) const { return splitmix64(key) & mask_; }
    void grow() {
        std::vector<Entry> old(std::max<std::size_t>(64, entries_.size() * 2));
        entries_.swap(old);
        mask_ = entries_.size() - 1;
        for (const Entry& e : old) {
            if (e.key == empty) continue;
            std::size_t j = slot_of(e.key);
            while (entries_[j].key != empty) j = (j + 1) & mask_;
            entries_[j] = e;
        }
    }

    std::vector<Entry> entries_;
    std::size_t size_ = 0;
    std::size_t mask_ = 0;
};

}  // namespace clustersim::engine
