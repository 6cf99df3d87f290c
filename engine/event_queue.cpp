// 4-ary heap operations with hole-moving sifts (one copy per level instead of a swap), over physical indices
// offset by `root` so that sibling groups are cache-line aligned.
#include "engine/event_queue.h"

#include "engine/error.h"

namespace clustersim::engine {

EventQueue::EventQueue() { heap_.resize(root, Key{Time{0}, 0}); }

void EventQueue::reserve(std::size_t n) {
    heap_.reserve(n + root);
    payloads_.reserve(n);
}

std::uint64_t EventQueue::push(Time at, std::uint16_t kind, std::uint32_t target, std::uint32_t generation) {
    CLUSTERSIM_CHECK(next_seq_ < max_sequence, "event sequence numbers exhausted after {} events", next_seq_);
    std::uint32_t slot;
    if (!free_slots_.empty()) {
        slot = free_slots_.back();
        free_slots_.pop_back();
        payloads_[slot] = Payload{target, generation, kind};
    } else {
        CLUSTERSIM_CHECK(payloads_.size() < max_pending, "more than {} events pending at once", max_pending);
        slot = static_cast<std::uint32_t>(payloads_.size());
        payloads_.push_back(Payload{target, generation, kind});
    }
    const std::uint64_t seq = next_seq_++;
    const Key key{at, (seq << slot_bits) | slot};
    std::size_t hole = heap_.size();  // physical index
    heap_.push_back(key);
    while (hole > root) {
        const std::size_t parent = (hole - root - 1) / 4 + root;
        if (!earlier(key, heap_[parent])) break;
        heap_[hole] = heap_[parent];
        hole = parent;
    }
    heap_[hole] = key;
    return seq;
}

Event EventQueue::pop() {
    CLUSTERSIM_CHECK(!empty(), "pop from an empty event queue");
    const Key top = heap_[root];
    const auto slot = static_cast<std::uint32_t>(top.seq_slot & (max_pending - 1));
    __builtin_prefetch(&payloads_[slot]);  // its cache miss overlaps the sift-down below
    const Key last = heap_.back();
    heap_.pop_back();
    const std::size_t end = heap_.size();
    if (end > root) {
        std::size_t hole = root;
        while (true) {
            const std::size_t first = (hole - root) * 4 + 1 + root;
            if (first >= end) break;
            std::size_t best = first;
            const std::size_t stop = first + 4 < end ? first + 4 : end;
            for (std::size_t c = first + 1; c < stop; ++c) {
                if (earlier(heap_[c], heap_[best])) best = c;
            }
            if (!earlier(heap_[best], last)) break;
            heap_[hole] = heap_[best];
            hole = best;
        }
        heap_[hole] = last;
    }
    const Payload& p = payloads_[slot];
    free_slots_.push_back(slot);
    return Event{top.at, top.seq_slot >> slot_bits, p.target, p.generation, p.kind};
}

}  // namespace clustersim::engine
