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
    /// The state of `key`, inserted (zeroed) if absent; `inserted` says which. The reference lasts until the next
    /// insert or erase.
    Value& find_or_insert(std::uint64_t key, bool& inserted) {
        if ((size_ + 1) * 2 > keys_.size()) grow();
        std::size_t i = slot_of(key);
        while (keys_[i] != empty && keys_[i] != key) i = (i + 1) & mask_;
        inserted = keys_[i] == empty;
        if (inserted) {
            keys_[i] = key;
            values_[i] = Value{};
            ++size_;
        }
        return values_[i];
    }
    /// The state of `key`, or null.
    Value* find(std::uint64_t key) {
        if (keys_.empty()) return nullptr;
        for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
            if (keys_[i] == key) return &values_[i];
            if (keys_[i] == empty) return nullptr;
        }
    }
    void erase(std::uint64_t key) {
        if (keys_.empty()) return;
        std::size_t i = slot_of(key);
        while (keys_[i] != key) {
            if (keys_[i] == empty) return;
            i = (i + 1) & mask_;
        }
        // Backward shift: move later entries of the probe run into the hole, so lookups never need tombstones.
        for (std::size_t j = (i + 1) & mask_; keys_[j] != empty; j = (j + 1) & mask_) {
            const std::size_t home = slot_of(keys_[j]);
            // Entry j may fill hole i when its home is not cyclically in (i, j].
            if (((j - home) & mask_) >= ((j - i) & mask_)) {
                keys_[i] = keys_[j];
                values_[i] = values_[j];
                i = j;
            }
        }
        keys_[i] = empty;
        --size_;
    }
    [[nodiscard]] std::size_t size() const { return size_; }
    /// Frees the memory.
    void clear() {
        std::vector<std::uint64_t>().swap(keys_);
        std::vector<Value>().swap(values_);
        size_ = 0;
        mask_ = 0;
    }

private:
    static constexpr std::uint64_t empty = UINT64_MAX;
    [[nodiscard]] std::size_t slot_of(std::uint64_t key) const { return splitmix64(key) & mask_; }
    void grow() {
        std::vector<std::uint64_t> keys(std::max<std::size_t>(64, keys_.size() * 2), empty);
        std::vector<Value> values(keys.size());
        keys_.swap(keys);
        values_.swap(values);
        mask_ = keys_.size() - 1;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            if (keys[i] == empty) continue;
            std::size_t j = slot_of(keys[i]);
            while (keys_[j] != empty) j = (j + 1) & mask_;
            keys_[j] = keys[i];
            values_[j] = values[i];
        }
    }

    std::vector<std::uint64_t> keys_;
    std::vector<Value> values_;
    std::size_t size_ = 0;
    std::size_t mask_ = 0;
};

}  // namespace clustersim::engine
