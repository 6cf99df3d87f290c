// Direct (mesh) algorithms: every member exchanges with every other at once. All-to-all sends S/n to each
// peer; all-gather sends its contribution to each peer; reduce-scatter sends each peer its piece; all-reduce is
// that reduce-scatter followed by an all-gather of the reduced pieces (a member's sends wait for all its
// receives); broadcast and reduce go between member 0 (the root) and each other member.
#include "sim/collectives/collective_algorithm.h"

namespace clustersim::sim {

using traces::CollectiveKind;

namespace {

class Direct final : public CollectiveAlgorithm {
public:
    bool supports(const PlanRequest&) const override { return true; }
    CollectivePlan plan(const PlanRequest& r) const override {
        CollectivePlan plan;
        const std::uint32_t n = r.members;
        if (n < 2) return plan;
        const std::uint64_t bytes = r.kind == CollectiveKind::barrier ? 0 : r.bytes;
        switch (r.kind) {
            case CollectiveKind::all_to_all:
                all_pairs(plan, n, [&](std::uint32_t i, std::uint32_t j) { return share_of(r.bytes_of(i), n, j); }, {});
                break;
            case CollectiveKind::reduce_scatter:
                all_pairs(plan, n, [&](std::uint32_t, std::uint32_t j) { return share_of(bytes, n, j); }, {});
                plan.mark_reducing_from(0);
                break;
            case CollectiveKind::all_gather:
                all_pairs(plan, n, [&](std::uint32_t i, std::uint32_t) { return r.bytes_of(i); }, {});
                break;
            case CollectiveKind::all_reduce:
            case CollectiveKind::barrier: {
                const auto into =
                    all_pairs(plan, n, [&](std::uint32_t, std::uint32_t j) { return share_of(bytes, n, j); }, {});
                if (r.kind == CollectiveKind::all_reduce) plan.mark_reducing_from(0);
                all_pairs(
                    plan, n, [&](std::uint32_t i, std::uint32_t) { return share_of(bytes, n, i); }, into, 1);
                break;
            }
            case CollectiveKind::broadcast:
                for (std::uint32_t j = 1; j < n; ++j) plan.add({0, j, bytes, 0});
                break;
            case CollectiveKind::reduce:
                for (std::uint32_t j = 1; j < n; ++j) plan.add({j, 0, bytes, 0});
                plan.mark_reducing_from(0);
                break;
        }
        return plan;
    }

private:
    /// One transfer i -> j for every pair; i's transfers wait for all of `into[i]`. Returns the transfers into
    /// each member.
    template <class Size>
    static std::vector<std::vector<std::uint32_t>> all_pairs(CollectivePlan& plan, std::uint32_t n, Size size,
                                                             const std::vector<std::vector<std::uint32_t>>& into,
                                                             std::uint32_t step = 0) {
        std::vector<std::vector<std::uint32_t>> received(n);
        for (std::uint32_t i = 0; i < n; ++i) {
            for (std::uint32_t j = 0; j < n; ++j) {
                if (i == j) continue;
                const std::span<const std::uint32_t> after = into.empty() ? std::span<const std::uint32_t>{} : into[i];
                received[j].push_back(plan.add({i, j, size(i, j), step}, after));
            }
        }
        return received;
    }
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_direct() { return std::make_unique<Direct>(); }

}  // namespace clustersim::sim
