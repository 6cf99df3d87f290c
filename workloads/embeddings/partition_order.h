// The order in which a partitioned graph embedding trains its edge buckets, and the partition swaps that order needs
// with a buffer of `buffer` partitions on the GPU (private to workloads/). Nodes are split into P partitions; the
// edges into P x P buckets by the partitions of their two ends; training bucket (i, j) needs partitions i and j in
// the buffer. Orderings:
//   sequential: buckets row by row (i, then j), evicting the least recently used partition the bucket does not need;
//   buffer_aware: every bucket whose two partitions are buffered is trained before any swap, and each swap brings
//     in the partition (and evicts the one) that makes the most untrained buckets trainable, as Marius's
//     buffer-aware ordering (Mohoney et al., OSDI 2021) aims to: fewer swaps for the same buckets.
// Deterministic: ties go to the lowest partition index.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace clustersim::workloads {

enum class PartitionOrdering : std::uint8_t { sequential, buffer_aware };

struct PartitionSwap {
    std::uint32_t out = UINT32_MAX;  // the partition written back and evicted, or none (a free slot)
    std::uint32_t in = 0;            // the partition loaded
};

struct BucketStep {
    std::uint32_t lhs = 0, rhs = 0;
    std::vector<PartitionSwap> swaps;  // done before this bucket trains
};

/// Every bucket of every epoch once per epoch, in training order, with the swaps before each.
std::vector<BucketStep> order_buckets(std::uint32_t partitions, std::uint32_t buffer, PartitionOrdering ordering,
                                      std::uint32_t epochs);

}  // namespace clustersim::workloads
