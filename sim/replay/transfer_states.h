// The executor's state of a scheduled collective's transfers (ring_schedule.h), kept only while it matters: from
// the first condition a transfer meets until it has arrived and its dependents have read its ideal end.
//
// Keyed by (slot, step). The positions of a ring seldom drift more than a step or two apart, so each slot has a
// window of cells indexed by step modulo its width: a class of transfers handled together touches neighbouring
// memory, where a hash table would miss the cache on nearly every lookup. A record whose cell holds another step
// (positions far apart: a late member, a slow link) goes to a flat hash table instead. Storage only: where a
// record lives never changes what it holds.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/flat_map.h"
#include "engine/time.h"

namespace clustersim::sim {

struct TransferState {
    std::uint32_t pending = 0;  // conditions not yet met before it starts
    std::uint8_t readers = 0;   // dependents that have yet to read ideal_done
    bool done = false;          // arrived
    engine::Time ideal_done{};  // its end on an empty network, relative to the call's first transfer
};

class TransferStates {
public:
    /// Empty, with windows for `slots` slots.
    void reset(std::uint32_t slots) {
        cells_.assign(std::size_t{slots} * window, Cell{});
        overflow_.clear();
        size_ = 0;
    }
    /// The state of (slot, step), inserted (zeroed) if absent; `inserted` says which. The reference lasts until
    /// the next insert or erase.
    TransferState& find_or_insert(std::uint32_t slot, std::uint32_t step, bool& inserted) {
        Cell& c = cells_[cell(slot, step)];
        inserted = false;
        if (c.step == step) return c.state;
        if (overflow_.size() > 0) {
            if (TransferState* found = overflow_.find(key(slot, step))) return *found;
        }
        inserted = true;
        ++size_;
        if (c.step == empty) {
            c.step = step;
            c.state = TransferState{};
            return c.state;
        }
        bool fresh = false;
        return overflow_.find_or_insert(key(slot, step), fresh);
    }
    /// The state of (slot, step), or null.
    TransferState* find(std::uint32_t slot, std::uint32_t step) {
        Cell& c = cells_[cell(slot, step)];
        if (c.step == step) return &c.state;
        return overflow_.size() > 0 ? overflow_.find(key(slot, step)) : nullptr;
    }
    void erase(std::uint32_t slot, std::uint32_t step) {
        Cell& c = cells_[cell(slot, step)];
        if (c.step == step) {
            c.step = empty;
        } else {
            overflow_.erase(key(slot, step));
        }
        --size_;
    }
    [[nodiscard]] std::size_t size() const { return size_; }
    /// Records kept outside the windows now.
    [[nodiscard]] std::size_t overflowing() const { return overflow_.size(); }
    /// The memory of its windows (kept by reset).
    [[nodiscard]] std::size_t capacity_bytes() const { return cells_.capacity() * sizeof(Cell); }
    /// Frees the memory.
    void clear() {
        std::vector<Cell>().swap(cells_);
        overflow_.clear();
        size_ = 0;
    }

private:
    static constexpr std::uint32_t window = 4;  // steps per slot held in place (a power of two)
    static constexpr std::uint32_t empty = UINT32_MAX;
    [[nodiscard]] static std::size_t cell(std::uint32_t slot, std::uint32_t step) {
        return std::size_t{slot} * window + (step & (window - 1));
    }
    [[nodiscard]] static std::uint64_t key(std::uint32_t slot, std::uint32_t step) {
        return (std::uint64_t{slot} << 32) | step;
    }
    struct Cell {  // the step it holds (or empty) beside its state: one cache line per lookup
        std::uint32_t step = empty;
        TransferState state;
    };
    std::vector<Cell> cells_;
    engine::FlatMap64<TransferState> overflow_;
    std::size_t size_ = 0;
};

}  // namespace clustersim::sim
