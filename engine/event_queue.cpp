// Keys of one event or of a bucket (a linked list of slots) in a 4-ary heap with hole-moving sifts (one copy per
// level instead of a swap), over physical indices offset by `root` so that sibling groups are cache-line aligned.
#include "engine/event_queue.h"

#include "engine/error.h"

namespace clustersim::engine {

EventQueue::EventQueue() : newest_(newest) { heap_.resize(root, Key{0, 0}); }

void EventQueue::reserve(std::size_t n) {
    heap_.reserve(n + root);
    payloads_.reserve(n);
    links_.reserve(n);
    slot_position_.reserve(n);
}

std::uint64_t EventQueue::next_sequence() {
    CLUSTERSIM_CHECK(next_seq_ < max_sequence, "event sequence numbers exhausted after {} events", next_seq_);
    return next_seq_++;
}

std::uint32_t EventQueue::insert(Time at, std::uint16_t kind, std::uint32_t target, std::uint32_t generation) {
    std::uint32_t slot;
    if (!free_slots_.empty()) {
        slot = free_slots_.back();
        free_slots_.pop_back();
    } else {
        CLUSTERSIM_CHECK(payloads_.size() < max_pending, "more than {} events pending at once", max_pending);
        slot = static_cast<std::uint32_t>(payloads_.size());
        payloads_.emplace_back();
        links_.emplace_back();
        slot_position_.push_back(0);
    }
    payloads_[slot] = Payload{target, generation, kind};
    place(slot, at);
    ++size_;
    return slot;
}

std::size_t EventQueue::pending_key(std::uint64_t bits, std::uint64_t id_bits) const {
    if (id_bits == none) return none;
    const auto id = static_cast<std::uint32_t>(id_bits & (max_pending - 1));
    // (A key with these id bits at the recorded position is this slot's or bucket's: a stale position holds
    // another key, or none.)
    std::size_t at_index;
    if ((id_bits & bucket_bit) != 0) {
        if (id >= buckets_.size()) return none;
        at_index = buckets_[id].position;
    } else {
        if (id >= slot_position_.size()) return none;
        at_index = slot_position_[id];
    }
    return pending_key_at(at_index, id_bits) && heap_[at_index].time_bits == bits ? at_index : none;
}

bool EventQueue::pending(std::uint32_t slot) const {
    // (A slot's link names a bucket exactly while it is in one: leaving it clears the link.)
    return slot < payloads_.size() && (own_key(slot) || links_[slot].bucket != none);
}

void EventQueue::place(std::uint32_t slot, Time at) {
    const std::uint64_t bits = time_bits(at);
    const std::uint64_t seq = next_sequence();
    // The table's key is the newest of its time when it is pending with that time: a key is made the table's entry
    // for its time when it is made, and a newer one of the same time would have replaced it there.
    Newest& entry = newest_[newest_index(bits)];
    const std::size_t at_index = entry.time_bits == bits ? pending_key(bits, entry.id_bits) : none;
    if (at_index == none) {  // a key of its own
        heap_.emplace_back();
        sift_up(heap_.size() - 1, Key{bits, seq << seq_shift | slot});
        entry = {bits, slot};
        return;
    }
    Key& key = heap_[at_index];
    std::uint32_t b;
    if (is_bucket(key)) {
        b = id_of(key);
    } else {
        // The key's one event becomes the first of a bucket; the key keeps its time and sequence number.
        const std::uint32_t single = id_of(key);
        if (!free_buckets_.empty()) {
            b = free_buckets_.back();
            free_buckets_.pop_back();
        } else {
            b = static_cast<std::uint32_t>(buckets_.size());
            buckets_.emplace_back();
        }
        buckets_[b] = {single, single, static_cast<std::uint32_t>(at_index)};
        links_[single] = {key.seq_id >> seq_shift, b, none, none};
        key.seq_id = (key.seq_id & ~(bucket_bit | (max_pending - 1))) | bucket_bit | b;
        entry = {bits, bucket_bit | b};
    }
    Bucket& bucket = buckets_[b];
    links_[slot] = {seq, b, none, bucket.last};
    links_[bucket.last].next = slot;
    bucket.last = slot;
}

void EventQueue::remove_key(std::size_t at_index) {
    const Key gone = heap_[at_index];
    const Key last = heap_.back();
    heap_.pop_back();
    if (at_index == heap_.size()) return;  // it was the last key
    if (earlier(last, gone))
        sift_up(at_index, last);
    else
        sift_down(at_index, last);
}

void EventQueue::detach(std::uint32_t slot) {
    if (own_key(slot))
        remove_key(slot_position_[slot]);
    else
        unlink(slot);
}

void EventQueue::unlink(std::uint32_t slot) {
    Link& s = links_[slot];
    const std::uint32_t b = s.bucket;
    Bucket& bucket = buckets_[b];
    (s.prev == none ? bucket.first : links_[s.prev].next) = s.next;
    (s.next == none ? bucket.last : links_[s.next].prev) = s.prev;
    s.bucket = none;
    if (bucket.first != none) return;
    // Empty: its key leaves the heap and the bucket is free (the table's entry for it, if any, goes stale).
    free_buckets_.push_back(b);
    remove_key(bucket.position);
}

void EventQueue::sift_up(std::size_t hole, Key key) {
    while (hole > root) {
        const std::size_t parent = (hole - root - 1) / 4 + root;
        if (!earlier(key, heap_[parent])) break;
        heap_[hole] = heap_[parent];
        set_position(heap_[hole], hole);
        hole = parent;
    }
    heap_[hole] = key;
    set_position(key, hole);
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
        set_position(heap_[hole], hole);
        hole = best;
    }
    heap_[hole] = key;
    set_position(key, hole);
}

Event EventQueue::pop() {
    CLUSTERSIM_CHECK(!empty(), "pop from an empty event queue");
    const Key top = heap_[root];
    std::uint32_t slot;
    std::uint64_t seq;
    if (!is_bucket(top)) {
        // A key of its own: the payload's cache miss overlaps the sift-down that takes the key out.
        slot = id_of(top);
        __builtin_prefetch(&payloads_[slot]);
        seq = top.seq_id >> seq_shift;
        remove_key(root);
    } else {
        slot = buckets_[id_of(top)].first;
        const Link& link = links_[slot];
        if (link.next != none) {  // the next event of this time: most likely the next pop
            __builtin_prefetch(&links_[link.next]);
            __builtin_prefetch(&payloads_[link.next]);
        }
        seq = link.seq;
        unlink(slot);
    }
    const Payload& p = payloads_[slot];
    free_slots_.push_back(slot);
    --size_;
    return Event{time_of(top), seq, p.target, p.generation, p.kind};
}

void EventQueue::reschedule(std::uint32_t slot, Time at, std::uint16_t kind, std::uint32_t target,
                            std::uint32_t generation) {
    CLUSTERSIM_CHECK(pending(slot), "rescheduling slot {}, which is not pending", slot);
    detach(slot);
    payloads_[slot] = Payload{target, generation, kind};
    place(slot, at);
}

void EventQueue::remove(std::uint32_t slot) {
    CLUSTERSIM_CHECK(pending(slot), "removing slot {}, which is not pending", slot);
    detach(slot);
    free_slots_.push_back(slot);
    --size_;
}

}  // namespace clustersim::engine
