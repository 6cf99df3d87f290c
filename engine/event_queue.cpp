// 4-ary heap operations with hole-moving sifts (one copy per level instead of a swap), over physical indices
// offset by `root` so that sibling groups are cache-line aligned.
#include "engine/event_queue.h"

#include "engine/error.h"

namespace clustersim::engine {

EventQueue::EventQueue() { heap_.resize(root, Key{0, 0}); }

void EventQueue::reserve(std::size_t n) {
    heap_.reserve(n + root);
    payloads_.reserve(n);
}

std::uint64_t EventQueue::next_sequence() {
    CLUSTERSIM_CHECK(next_seq_ < max_sequence, "event sequence numbers exhausted after {} events", next_seq_);
    return next_seq_++;
}

EventQueue::Inserted EventQueue::insert(Time at, std::uint16_t kind, std::uint32_t target, std::uint32_t generation) {
    std::uint32_t slot;
    if (!free_slots_.empty()) {
        slot = free_slots_.back();
        free_slots_.pop_back();
        payloads_[slot] = Payload{target, generation, kind};
    } else {
        CLUSTERSIM_CHECK(payloads_.size() < max_pending, "more than {} events pending at once", max_pending);
        slot = static_cast<std::uint32_t>(payloads_.size());
        payloads_.push_back(Payload{target, generation, kind});
        position_.push_back(0);
    }
    const std::uint64_t seq = next_sequence();
    heap_.emplace_back();
    sift_up(heap_.size() - 1, Key{time_bits(at), (seq << slot_bits) | slot});
    return {seq, slot};
}

void EventQueue::sift_up(std::size_t hole, Key key) {
    while (hole > root) {
        const std::size_t parent = (hole - root - 1) / 4 + root;
        if (!earlier(key, heap_[parent])) break;
        heap_[hole] = heap_[parent];
        position_[slot_of(heap_[hole])] = static_cast<std::uint32_t>(hole);
        hole = parent;
    }
    heap_[hole] = key;
    position_[slot_of(key)] = static_cast<std::uint32_t>(hole);
}

void EventQueue::sift_down(std::size_t hole, Key key) {
    const std::size_t end = heap_.size();
    const Key* const h = heap_.data();
    while (true) {
        const std::size_t first = (hole - root) * 4 + 1 + root;
        if (first >= end) break;
        std::size_t best;
        if (first + 4 <= end) {
            // The least of four siblings by two pairs, then their winners (keys are distinct: the same child as
            // a scan would pick), with conditional moves.
            const std::size_t low = first + static_cast<std::size_t>(earlier(h[first + 1], h[first]));
            const std::size_t high = first + 2 + static_cast<std::size_t>(earlier(h[first + 3], h[first + 2]));
            const std::size_t take_high = std::size_t{0} - static_cast<std::size_t>(earlier(h[high], h[low]));
            best = low ^ ((low ^ high) & take_high);
        } else {
            best = first;
            for (std::size_t c = first + 1; c < end; ++c) {
                if (earlier(h[c], h[best])) best = c;
            }
        }
        if (!earlier(h[best], key)) break;
        heap_[hole] = heap_[best];
        position_[slot_of(heap_[hole])] = static_cast<std::uint32_t>(hole);
        hole = best;
    }
    heap_[hole] = key;
    position_[slot_of(key)] = static_cast<std::uint32_t>(hole);
}

Event EventQueue::pop() {
    CLUSTERSIM_CHECK(!empty(), "pop from an empty event queue");
    const Key top = heap_[root];
    const std::uint32_t slot = slot_of(top);
    __builtin_prefetch(&payloads_[slot]);  // its cache miss overlaps the sift-down below
    const Key last = heap_.back();
    heap_.pop_back();
    if (heap_.size() > root) sift_down(root, last);
    const Payload& p = payloads_[slot];
    free_slots_.push_back(slot);
    return Event{time_of(top), top.seq_slot >> slot_bits, p.target, p.generation, p.kind};
}

void EventQueue::reschedule(std::uint32_t slot, Time at, std::uint16_t kind, std::uint32_t target,
                            std::uint32_t generation) {
    const std::size_t at_index = position_[slot];
    CLUSTERSIM_CHECK(at_index >= root && at_index < heap_.size() && slot_of(heap_[at_index]) == slot,
                     "rescheduling slot {}, which is not pending", slot);
    payloads_[slot] = Payload{target, generation, kind};
    const Key key{time_bits(at), (next_sequence() << slot_bits) | slot};
    if (earlier(key, heap_[at_index]))
        sift_up(at_index, key);
    else
        sift_down(at_index, key);
}

void EventQueue::remove(std::uint32_t slot) {
    const std::size_t at_index = position_[slot];
    CLUSTERSIM_CHECK(at_index >= root && at_index < heap_.size() && slot_of(heap_[at_index]) == slot,
                     "removing slot {}, which is not pending", slot);
    const Key gone = heap_[at_index];
    const Key last = heap_.back();
    heap_.pop_back();
    free_slots_.push_back(slot);
    if (at_index == heap_.size()) return;  // it was the last key
    if (earlier(last, gone))
        sift_up(at_index, last);
    else
        sift_down(at_index, last);
}

}  // namespace clustersim::engine
