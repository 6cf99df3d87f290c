// Bucket orderings and partition swaps of a partitioned graph embedding (see partition_order.h).
#include "workloads/embeddings/partition_order.h"

#include <algorithm>

namespace clustersim::workloads {

namespace {

/// The buffer: which partitions it holds and when each was last used (for LRU).
struct Buffer {
    std::uint32_t capacity;
    std::vector<std::uint8_t> held;       // by partition
    std::vector<std::uint64_t> last_use;  // by partition
    std::vector<std::uint32_t> members;   // held partitions, in load order
    std::uint64_t clock = 0;

    Buffer(std::uint32_t partitions, std::uint32_t size)
        : capacity(size), held(partitions, 0), last_use(partitions, 0) {}
    void swap(PartitionSwap s) {
        if (s.out != UINT32_MAX) {
            held[s.out] = 0;
            members.erase(std::find(members.begin(), members.end(), s.out));
        }
        held[s.in] = 1;
        members.push_back(s.in);
    }
};

void sequential_epoch(std::uint32_t p, Buffer& buffer, std::vector<BucketStep>& out) {
    for (std::uint32_t i = 0; i < p; ++i) {
        for (std::uint32_t j = 0; j < p; ++j) {
            BucketStep step{i, j, {}};
            for (const std::uint32_t need : {i, j}) {
                if (buffer.held[need]) continue;
                PartitionSwap s{UINT32_MAX, need};
                if (buffer.members.size() >= buffer.capacity) {
                    // The least recently used partition this bucket does not need (the lowest index of equals).
                    std::uint32_t victim = UINT32_MAX;
                    for (const std::uint32_t m : buffer.members) {
                        if (m == i || m == j) continue;
                        if (victim == UINT32_MAX || buffer.last_use[m] < buffer.last_use[victim] ||
                            (buffer.last_use[m] == buffer.last_use[victim] && m < victim))
                            victim = m;
                    }
                    s.out = victim;
                }
                buffer.swap(s);
                step.swaps.push_back(s);
            }
            buffer.last_use[i] = buffer.last_use[j] = ++buffer.clock;
            out.push_back(std::move(step));
        }
    }
}

void buffer_aware_epoch(std::uint32_t p, Buffer& buffer, std::vector<BucketStep>& out) {
    std::vector<std::uint8_t> done(std::size_t{p} * p, 0);
    std::size_t left = std::size_t{p} * p;
    auto untrained = [&](std::uint32_t a, std::uint32_t b) { return done[std::size_t{a} * p + b] == 0; };
    std::vector<PartitionSwap> pending;  // swaps made since the last trained bucket
    std::size_t first_untrained = 0;     // only moves forward: buckets are never untrained again
    auto train_buffered = [&](std::uint32_t only) {
        // Every untrained bucket of buffered partitions (those involving `only`, when given), row by row.
        std::vector<std::uint32_t> held = buffer.members;
        std::sort(held.begin(), held.end());
        for (const std::uint32_t a : held) {
            for (const std::uint32_t b : held) {
                if (!untrained(a, b) || (only != UINT32_MAX && a != only && b != only)) continue;
                done[std::size_t{a} * p + b] = 1;
                --left;
                out.push_back({a, b, std::move(pending)});
                pending.clear();
            }
        }
    };
    // Fill the free slots with the lowest partitions first.
    for (std::uint32_t k = 0; k < p && buffer.members.size() < buffer.capacity; ++k) {
        if (buffer.held[k]) continue;
        const PartitionSwap s{UINT32_MAX, k};
        buffer.swap(s);
        pending.push_back(s);
    }
    train_buffered(UINT32_MAX);
    while (left > 0) {
        // gain(o, n) = G(n) - untrained(n, o) - untrained(o, n), with G(n) the untrained buckets n would make
        // trainable beside the whole buffer.
        std::uint32_t best_out = UINT32_MAX, best_in = UINT32_MAX;
        std::int64_t best_gain = -1;
        for (std::uint32_t n = 0; n < p; ++n) {
            if (buffer.held[n]) continue;
            std::int64_t g = untrained(n, n);
            for (const std::uint32_t x : buffer.members) g += untrained(n, x) + untrained(x, n);
            for (const std::uint32_t o : buffer.members) {
                const std::int64_t gain = g - untrained(n, o) - untrained(o, n);
                if (gain > best_gain || (gain == best_gain && (o < best_out || (o == best_out && n < best_in)))) {
                    best_gain = gain;
                    best_out = o;
                    best_in = n;
                }
            }
        }
        if (best_gain == 0) {
            // No single swap trains anything: bring in an end of the first untrained bucket, evicting the buffered
            // partition with the fewest untrained buckets.
            while (done[first_untrained]) ++first_untrained;
            const auto a = static_cast<std::uint32_t>(first_untrained / p);
            const auto b = static_cast<std::uint32_t>(first_untrained % p);
            best_in = buffer.held[a] ? b : a;
            best_out = UINT32_MAX;
            std::int64_t fewest = INT64_MAX;
            for (const std::uint32_t o : buffer.members) {
                if (o == a || o == b) continue;
                std::int64_t count = 0;
                for (std::uint32_t x = 0; x < p; ++x) count += untrained(o, x) + untrained(x, o);
                if (count < fewest || (count == fewest && o < best_out)) {
                    fewest = count;
                    best_out = o;
                }
            }
        }
        const PartitionSwap s{best_out, best_in};
        buffer.swap(s);
        pending.push_back(s);
        train_buffered(best_in);
    }
}

}  // namespace

std::vector<BucketStep> order_buckets(std::uint32_t partitions, std::uint32_t buffer_size, PartitionOrdering ordering,
                                      std::uint32_t epochs) {
    Buffer buffer(partitions, std::min(buffer_size, partitions));
    std::vector<BucketStep> out;
    out.reserve(std::size_t{partitions} * partitions * epochs);
    for (std::uint32_t e = 0; e < epochs; ++e) {
        if (ordering == PartitionOrdering::sequential) {
            sequential_epoch(partitions, buffer, out);
        } else {
            buffer_aware_epoch(partitions, buffer, out);
        }
    }
    return out;
}

}  // namespace clustersim::workloads
