// Who sends to whom in decentralized (gossip) averaging at one round: on a fixed graph (ring, 2-D torus, the
// directed exponential graph) or one that changes every round (the one-peer exponential graph, random perfect
// matchings). Ring, torus and matchings are undirected (a rank sends to the peers it receives from); the
// exponential graphs are directed, as in the decentralized-SGD literature: i sends to i + 2^k and receives from
// i - 2^k (mod n).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace clustersim::workloads {

enum class GossipGraph : std::uint8_t { ring, torus, exponential, one_peer_exponential, random_matching };

std::optional<GossipGraph> parse_gossip_graph(std::string_view name);
const char* gossip_graph_names();  // for messages: "ring, torus, ..."

/// The ranks each rank sends to at `round` (sorted, never itself, no repeats), for `ranks` ranks. The torus is the
/// most square rows x columns factorization (rows <= columns); the exponential graph sends to i + 2^k for every k
/// below log2(n) rounded up, the one-peer one only for k = round mod that; random matchings pair ranks by a
/// shuffle seeded by (seed, round), one rank left out when the count is odd.
std::vector<std::vector<std::uint32_t>> gossip_peers(GossipGraph graph, std::uint32_t ranks, std::uint32_t round,
                                                     std::uint64_t seed);
/// 0 .. n-1 shuffled by Fisher-Yates with a counter-based generator keyed by (seed, round): the same on every
/// machine (random matchings pair its neighbours; federated rounds take its first clients).
std::vector<std::uint32_t> seeded_permutation(std::uint32_t n, std::uint64_t seed, std::uint32_t round);
/// The ranks each rank receives from: `sends` transposed (sorted).
std::vector<std::vector<std::uint32_t>> gossip_sources(const std::vector<std::vector<std::uint32_t>>& sends);

}  // namespace clustersim::workloads
