// Recursive halving-doubling (Thakur et al., 2005), for a power-of-two member count. Reduce-scatter by
// recursive halving: in step k each member exchanges half of its current segment (S/2^(k+1)) with the member
// at distance n/2^(k+1); all-gather by recursive doubling, the reverse. All-reduce is both: on uncontended
// links 2 log2(n) alpha + 2 (n-1)/n S/B. Each send waits for the member's receive of the previous step.
#include <bit>

#include "sim/collectives/collective_algorithm.h"

namespace clustersim::sim {

using traces::CollectiveKind;

namespace {

class HalvingDoubling final : public CollectiveAlgorithm {
public:
    bool supports(const PlanRequest& r) const override {
        const bool kind_ok = r.kind == CollectiveKind::all_reduce || r.kind == CollectiveKind::reduce_scatter ||
                             r.kind == CollectiveKind::all_gather || r.kind == CollectiveKind::barrier;
        return kind_ok && std::has_single_bit(r.members);
    }
    CollectivePlan plan(const PlanRequest& r) const override {
        CollectivePlan plan;
        const std::uint32_t n = r.members;
        if (n < 2) return plan;
        const auto rounds = static_cast<std::uint32_t>(std::countr_zero(n));
        const std::uint64_t bytes = r.kind == CollectiveKind::barrier ? 0 : r.bytes;
        std::vector<std::uint32_t> last(n, no_transfer);
        std::uint32_t step = 0;
        auto exchange = [&](std::uint32_t distance, std::uint64_t size) {
            std::vector<std::uint32_t> next(n, no_transfer);
            for (std::uint32_t i = 0; i < n; ++i) {
                const std::uint32_t partner = i ^ distance;
                next[partner] = last[i] == no_transfer ? plan.add({i, partner, size, step})
                                                       : plan.add({i, partner, size, step}, {last[i]});
            }
            last = next;
            ++step;
        };
        if (r.kind != CollectiveKind::all_gather) {
            for (std::uint32_t k = 0; k < rounds; ++k) exchange(n >> (k + 1), bytes >> (k + 1));
            if (r.kind != CollectiveKind::barrier) plan.mark_reducing_from(0);  // recursive halving reduces
        }
        if (r.kind == CollectiveKind::all_gather) {
            for (std::uint32_t k = 0; k < rounds; ++k) exchange(1U << k, bytes << k);
        } else if (r.kind != CollectiveKind::reduce_scatter) {
            for (std::uint32_t k = rounds; k-- > 0;) exchange(n >> (k + 1), bytes >> (k + 1));
        }
        return plan;
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_halving_doubling() { return std::make_unique<HalvingDoubling>(); }

}  // namespace clustersim::sim
