// NVLS-style all-reduce inside one node: the NVSwitch reduces and multicasts (Hopper's NVLink SHARP). Each GPU's
// buffer goes up to the switch once and the reduced result comes down once, pipelined in chunks: a chunk comes
// down once every GPU has sent it up. Per GPU S bytes each way, against 2(n-1)/n S for a ring.
#include "sim/collectives/collective_algorithm.h"

namespace clustersim::sim {

using traces::CollectiveKind;

namespace {

class Nvls final : public CollectiveAlgorithm {
public:
    bool supports(const PlanRequest& r) const override {
        return (r.kind == CollectiveKind::all_reduce || r.kind == CollectiveKind::barrier) && r.switch_reduction &&
               r.members >= 2;
    }
    CollectivePlan plan(const PlanRequest& r) const override {
        CollectivePlan plan;
        const std::uint32_t n = r.members, chunks = std::max<std::uint32_t>(1, r.chunks);
        const std::uint64_t bytes = r.kind == CollectiveKind::barrier ? 0 : r.bytes;
        std::vector<std::uint32_t> last_up(n, no_transfer), last_down(n, no_transfer), ups(n);
        for (std::uint32_t c = 0; c < chunks; ++c) {
            const std::uint64_t piece = share_of(bytes, chunks, c);
            for (std::uint32_t m = 0; m < n; ++m)
                ups[m] = last_up[m] = plan.add({m, switch_endpoint, piece, c, last_up[m]});
            for (std::uint32_t m = 0; m < n; ++m)
                last_down[m] = plan.add({switch_endpoint, m, piece, c + 1, last_down[m]}, ups);
        }
        return plan;
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_nvls() { return std::make_unique<Nvls>(); }

}  // namespace clustersim::sim
