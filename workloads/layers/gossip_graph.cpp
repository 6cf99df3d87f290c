#include "workloads/layers/gossip_graph.h"

#include <algorithm>
#include <numeric>

#include "engine/hash.h"

namespace clustersim::workloads {

std::optional<GossipGraph> parse_gossip_graph(std::string_view name) {
    if (name == "ring") return GossipGraph::ring;
    if (name == "torus") return GossipGraph::torus;
    if (name == "exponential") return GossipGraph::exponential;
    if (name == "one_peer_exponential") return GossipGraph::one_peer_exponential;
    if (name == "random_matching") return GossipGraph::random_matching;
    return std::nullopt;
}

const char* gossip_graph_names() { return "ring, torus, exponential, one_peer_exponential, random_matching"; }

namespace {

void link(std::vector<std::vector<std::uint32_t>>& peers, std::uint32_t a, std::uint32_t b) {
    if (a == b) return;
    peers[a].push_back(b);
    peers[b].push_back(a);
}

void send_to(std::vector<std::vector<std::uint32_t>>& peers, std::uint32_t a, std::uint32_t b) {
    if (a != b) peers[a].push_back(b);
}

std::uint32_t log2_ceil(std::uint32_t n) {
    std::uint32_t k = 0;
    while ((std::uint64_t{1} << k) < n) ++k;
    return k;
}

}  // namespace

std::vector<std::vector<std::uint32_t>> gossip_peers(GossipGraph graph, std::uint32_t ranks, std::uint32_t round,
                                                     std::uint64_t seed) {
    std::vector<std::vector<std::uint32_t>> peers(ranks);
    const std::uint32_t n = ranks;
    switch (graph) {
        case GossipGraph::ring:
            for (std::uint32_t i = 0; i < n; ++i) link(peers, i, (i + 1) % n);
            break;
        case GossipGraph::torus: {
            std::uint32_t rows = 1;
            for (std::uint32_t r = 1; r * r <= n; ++r)
                if (n % r == 0) rows = r;
            const std::uint32_t cols = n / rows;
            for (std::uint32_t i = 0; i < n; ++i) {
                const std::uint32_t r = i / cols, c = i % cols;
                link(peers, i, r * cols + (c + 1) % cols);
                link(peers, i, ((r + 1) % rows) * cols + c);
            }
            break;
        }
        case GossipGraph::exponential:
            for (std::uint32_t k = 0; k < log2_ceil(n); ++k)
                for (std::uint32_t i = 0; i < n; ++i)
                    send_to(peers, i, static_cast<std::uint32_t>((i + (1ULL << k)) % n));
            break;
        case GossipGraph::one_peer_exponential: {
            const std::uint32_t levels = std::max<std::uint32_t>(1, log2_ceil(n));
            const std::uint64_t hop = 1ULL << (round % levels);
            for (std::uint32_t i = 0; i < n; ++i) send_to(peers, i, static_cast<std::uint32_t>((i + hop) % n));
            break;
        }
        case GossipGraph::random_matching: {
            const std::vector<std::uint32_t> order = seeded_permutation(n, seed, round);
            for (std::uint32_t i = 0; i + 1 < n; i += 2) link(peers, order[i], order[i + 1]);
            break;
        }
    }
    for (auto& p : peers) {
        std::sort(p.begin(), p.end());
        p.erase(std::unique(p.begin(), p.end()), p.end());
    }
    return peers;
}

std::vector<std::uint32_t> seeded_permutation(std::uint32_t n, std::uint64_t seed, std::uint32_t round) {
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0U);
    for (std::uint32_t i = n; i > 1; --i)
        std::swap(order[i - 1], order[engine::hash_combine(engine::hash_combine(seed, round), i) % i]);
    return order;
}

std::vector<std::vector<std::uint32_t>> gossip_sources(const std::vector<std::vector<std::uint32_t>>& sends) {
    std::vector<std::vector<std::uint32_t>> sources(sends.size());
    for (std::uint32_t i = 0; i < sends.size(); ++i)
        for (const std::uint32_t j : sends[i]) sources[j].push_back(i);  // i ascending: already sorted
    return sources;
}

}  // namespace clustersim::workloads
