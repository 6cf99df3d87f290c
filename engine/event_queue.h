// The pending-event set: a cache-aligned 4-ary min-heap ordered by (time, sequence number), whose keys stand for
// one event, or for a bucket of events at one time: a list in the order they were scheduled. Ranks in step end
// their kernels at the same instants: in a 1,024-GPU GPT-3 iteration 98% of the events ran at the time of the event
// before them (84% at 16,384 GPUs), and each cost a pop of the heap; in a bucket they cost two list links. An event
// at a time no pending event has is a key of its own, as in a plain heap. A bucket takes events while it is the
// newest of its time (found through a small table by time), so its sequence numbers are one run, later than any
// older key's of that time, and its key keeps its first one: the least key's first event is the least
// (time, sequence). Each event's record (payload, bucket, list links) sits in a slab by slot, and each key's heap
// position is tracked, so that a pending event can be moved or removed in place (a re-armed timer leaves no stale
// entry to pop). Events at equal times run in the order they were scheduled, on every machine.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>
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

/// Events by (at, seq): a min-heap of keys for one event or for a bucket of events at one time (see above).
class EventQueue {
public:
    EventQueue();
    /// Adds an event at `at` and returns the sequence number it was stamped with.
    std::uint64_t push(Time at, std::uint16_t kind, std::uint32_t target, std::uint32_t generation) {
        insert(at, kind, target, generation);
        return next_seq_ - 1;
    }
    /// Adds an event and returns its slot, by which it can be moved or removed while pending (timers).
    std::uint32_t push_movable(Time at, std::uint16_t kind, std::uint32_t target, std::uint32_t generation) {
        return insert(at, kind, target, generation);
    }
    /// Moves the pending event in `slot` to `at` with a fresh sequence number and a new payload: it then runs
    /// exactly where a new event pushed now would (so timers need no stale entries left behind).
    void reschedule(std::uint32_t slot, Time at, std::uint16_t kind, std::uint32_t target, std::uint32_t generation);
    /// Removes the pending event in `slot`.
    void remove(std::uint32_t slot);
    /// Removes and returns the earliest event. The queue must not be empty.
    Event pop();
    [[nodiscard]] Time top_time() const { return time_of(heap_[root]); }
    /// The earliest event's target and kind (the queue must not be empty): what the next pop will return, for a
    /// model to prefetch its state while it handles the current event.
    [[nodiscard]] std::pair<std::uint32_t, std::uint16_t> top_target() const {
        const Key& top = heap_[root];
        const Payload& p = payloads_[is_bucket(top) ? buckets_[id_of(top)].first : id_of(top)];
        return {p.target, p.kind};
    }
    [[nodiscard]] bool empty() const { return size_ == 0; }
    [[nodiscard]] std::size_t size() const { return size_; }
    void reserve(std::size_t n);

    static constexpr int slot_bits = 24;
    static constexpr std::uint64_t max_pending = (1ULL << slot_bits);
    static constexpr std::uint64_t max_sequence = (1ULL << (63 - slot_bits));

private:
    // A key: the time's bits with the sign bit flipped (signed order as unsigned order) above the sequence number,
    // a bit that says whether it stands for a bucket, and the slot or bucket: the key orders as one 128-bit
    // unsigned integer, compared in two integer compares without a branch.
    struct Key {
        std::uint64_t time_bits;
        std::uint64_t seq_id;
    };
    static std::uint64_t time_bits(Time at) { return static_cast<std::uint64_t>(at.count()) ^ sign_bit; }
    static Time time_of(const Key& k) { return Time{static_cast<std::int64_t>(k.time_bits ^ sign_bit)}; }
    static constexpr std::uint64_t bucket_bit = std::uint64_t{1} << slot_bits;
    static constexpr int seq_shift = slot_bits + 1;
    static std::uint32_t id_of(const Key& k) { return static_cast<std::uint32_t>(k.seq_id & (max_pending - 1)); }
    static bool is_bucket(const Key& k) { return (k.seq_id & bucket_bit) != 0; }
    static constexpr std::uint32_t none = UINT32_MAX;
    /// An event's payload, by slot.
    struct Payload {
        std::uint32_t target;
        std::uint32_t generation;
        std::uint16_t kind;
    };
    /// An event's place in its bucket, by slot: valid while it is in one (a key of its own has its slot's key).
    struct Link {
        std::uint64_t seq = 0;
        std::uint32_t bucket = none;
        std::uint32_t next = none, prev = none;
    };
    /// The events of a bucket, first to last (first none: free), and its key's place in the heap.
    struct Bucket {
        std::uint32_t first = none, last = none;
        std::uint32_t position = 0;
    };
    // Physical index of the root: with it at 3, the children of logical node i (4i+1..4i+4) sit at physical
    // 4(i+1)..4(i+1)+3, one aligned cache line.
    static constexpr std::size_t root = 3;
    static constexpr std::uint64_t sign_bit = std::uint64_t{1} << 63;
    static bool earlier(const Key& a, const Key& b) {
        __extension__ typedef unsigned __int128 Order;
        return ((Order{a.time_bits} << 64) | a.seq_id) < ((Order{b.time_bits} << 64) | b.seq_id);
    }
    /// The newest key of a time, by a hash of the time (direct-mapped, `newest` entries): its time bits and its
    /// key's id bits (bucket bit and id), checked against the heap on use.
    struct Newest {
        std::uint64_t time_bits = 0;
        std::uint64_t id_bits = none;
    };
    static constexpr std::size_t newest = 1024;
    static std::size_t newest_index(std::uint64_t bits) { return (bits * 0x9e3779b97f4a7c15ULL) >> 54; }
    /// The heap position of the key `id_bits` stands for, if it is pending with time `bits`; else none.
    [[nodiscard]] std::size_t pending_key(std::uint64_t bits, std::uint64_t id_bits) const;
    /// Whether `slot` is pending as a key of its own (else it is in a bucket, or free).
    [[nodiscard]] bool own_key(std::uint32_t slot) const { return pending_key_at(slot_position_[slot], slot); }
    /// Whether the key at heap index `at_index` has the id bits `id_bits`.
    [[nodiscard]] bool pending_key_at(std::size_t at_index, std::uint64_t id_bits) const {
        return at_index >= root && at_index < heap_.size() &&
               (heap_[at_index].seq_id & (bucket_bit | (max_pending - 1))) == id_bits;
    }
    /// Whether `slot` is pending.
    [[nodiscard]] bool pending(std::uint32_t slot) const;
    std::uint32_t insert(Time at, std::uint16_t kind, std::uint32_t target, std::uint32_t generation);
    /// Stamps `slot` with a fresh sequence number and adds it at `at`: to the newest key of that time if it is
    /// pending (a key of one event becomes a bucket), or as a key of its own.
    void place(std::uint32_t slot, Time at);
    /// Takes the pending `slot` out of the heap or its bucket (a bucket left empty leaves the heap and is freed).
    void detach(std::uint32_t slot);
    /// Takes `slot` out of its bucket's list (a bucket left empty leaves the heap and is freed).
    void unlink(std::uint32_t slot);
    /// Removes the key at heap index `at_index`.
    void remove_key(std::size_t at_index);
    std::uint64_t next_sequence();
    /// Records that the key `key` is at heap index `index` (in its slot's or its bucket's position).
    void set_position(const Key& key, std::size_t index) {
        if (is_bucket(key))
            buckets_[id_of(key)].position = static_cast<std::uint32_t>(index);
        else
            slot_position_[id_of(key)] = static_cast<std::uint32_t>(index);
    }
    /// Places `key` at the hole `hole` (physical), moving it up or down to its place; every moved key's position
    /// is recorded.
    void sift_up(std::size_t hole, Key key);
    void sift_down(std::size_t hole, Key key);

    std::vector<Key, CacheAlignedAllocator<Key>> heap_;
    std::vector<Payload> payloads_;
    std::vector<Link> links_;
    std::vector<std::uint32_t> slot_position_;  // by slot: its key's heap index, while it is a key of its own
    std::vector<std::uint32_t> free_slots_;
    std::vector<Bucket> buckets_;
    std::vector<std::uint32_t> free_buckets_;
    std::vector<Newest> newest_;
    std::size_t size_ = 0;
    std::uint64_t next_seq_ = 0;
};

}  // namespace clustersim::engine
