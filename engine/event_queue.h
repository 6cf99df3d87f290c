// The pending-event set: a cache-aligned 4-ary min-heap of 16-byte keys ordered by (time, sequence), with each
// event's payload in a slab beside it and each slot's heap position tracked, so that a pending event can be moved
// or removed in place (a re-armed timer leaves no stale entry to pop). The sequence number is stamped at scheduling, so
// events at equal times run in the order they were scheduled, on every machine.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "engine/time.h"

namespace clustersim::engine {

/// One event as the run loop sees it. `kind` and `target` mean what the model that scheduled it says; the engine
/// never looks. A timer's event has generation 1 and its timer id as target (see Simulator::arm).
struct Event {
    Time at{};
    std::uint64_t seq = 0;
    std::uint32_t target = 0;
    std::uint32_t generation = 0;
    std::uint16_t kind = 0;

    bool operator==(const Event&) const = default;
};

/// std::allocator with 64-byte (cache-line) alignment, so that the heap's groups of four siblings share a line.
template <class T>
struct CacheAlignedAllocator {
    using value_type = T;
    static constexpr std::align_val_t alignment{64};
    CacheAlignedAllocator() = default;
    template <class U>
    CacheAlignedAllocator(const CacheAlignedAllocator<U>&) {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment)); }
    void deallocate(T* p, std::size_t) { ::operator delete(p, alignment); }
    template <class U>
    bool operator==(const CacheAlignedAllocator<U>&) const {
        return true;
    }
};

/// Min-heap of events by (at, seq). Keys are 16 bytes: the time, and the sequence number (high 40 bits) with the
/// payload's slab slot (low 24 bits). Four siblings fill one cache line, so each level costs at most one miss.
class EventQueue {
public:
    EventQueue();
    /// Adds an event at `at` and returns the sequence number it was stamped with.
    std::uint64_t push(Time at, std::uint16_t kind, std::uint32_t target, std::uint32_t generation) {
        return insert(at, kind, target, generation).seq;
    }
    /// Adds an event and returns its slot, by which it can be moved or removed while pending (timers).
    std::uint32_t push_movable(Time at, std::uint16_t kind, std::uint32_t target, std::uint32_t generation) {
        return insert(at, kind, target, generation).slot;
    }
    /// Moves the pending event in `slot` to `at` with a fresh sequence number and a new payload: it then runs
    /// exactly where a new event pushed now would (so timers need no stale entries left behind).
    void reschedule(std::uint32_t slot, Time at, std::uint16_t kind, std::uint32_t target, std::uint32_t generation);
    /// Removes the pending event in `slot`.
    void remove(std::uint32_t slot);
    /// Removes and returns the earliest event. The queue must not be empty.
    Event pop();
    [[nodiscard]] Time top_time() const { return time_of(heap_[root]); }
    [[nodiscard]] bool empty() const { return heap_.size() == root; }
    [[nodiscard]] std::size_t size() const { return heap_.size() - root; }
    void reserve(std::size_t n);

    static constexpr int slot_bits = 24;
    static constexpr std::uint64_t max_pending = (1ULL << slot_bits);
    static constexpr std::uint64_t max_sequence = (1ULL << (64 - slot_bits));

private:
    // The time's bits with the sign bit flipped (signed order as unsigned order) above the sequence and slot: the
    // key orders as one 128-bit unsigned integer, compared in two integer compares without a branch. Events at
    // equal times are common (ranks in step end their kernels together), and a branch on the times' equality
    // mispredicted on most of them.
    struct Key {
        std::uint64_t time_bits;
        std::uint64_t seq_slot;
    };
    static std::uint64_t time_bits(Time at) { return static_cast<std::uint64_t>(at.count()) ^ sign_bit; }
    static Time time_of(const Key& k) { return Time{static_cast<std::int64_t>(k.time_bits ^ sign_bit)}; }
    struct Payload {
        std::uint32_t target;
        std::uint32_t generation;
        std::uint16_t kind;
    };
    // Physical index of the root: with it at 3, the children of logical node i (4i+1..4i+4) sit at physical
    // 4(i+1)..4(i+1)+3, one aligned cache line.
    static constexpr std::size_t root = 3;
    static constexpr std::uint64_t sign_bit = std::uint64_t{1} << 63;
    static bool earlier(const Key& a, const Key& b) {
        __extension__ typedef unsigned __int128 Order;
        return ((Order{a.time_bits} << 64) | a.seq_slot) < ((Order{b.time_bits} << 64) | b.seq_slot);
    }
    static std::uint32_t slot_of(const Key& k) { return static_cast<std::uint32_t>(k.seq_slot & (max_pending - 1)); }
    struct Inserted {
        std::uint64_t seq;
        std::uint32_t slot;
    };
    Inserted insert(Time at, std::uint16_t kind, std::uint32_t target, std::uint32_t generation);
    std::uint64_t next_sequence();
    /// Places `key` at the hole `hole` (physical), moving it up or down to its place; every moved key's slot
    /// records its new position.
    void sift_up(std::size_t hole, Key key);
    void sift_down(std::size_t hole, Key key);

    std::vector<Key, CacheAlignedAllocator<Key>> heap_;
    std::vector<Payload> payloads_;
    std::vector<std::uint32_t> position_;  // by slot: the physical heap index of its key while pending
    std::vector<std::uint32_t> free_slots_;
    std::uint64_t next_seq_ = 0;
};

}  // namespace clustersim::engine
