// Per call: all members' sizes agree for the kinds that need it (member_sizes.h).
#include "traces/formats/member_sizes.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include "engine/log.h"

namespace clustersim::traces {

void reconcile_member_sizes(OpGraph& g, const std::string& file) {
    const auto issued = collectives_by_member(g);  // comm -> member -> ops
    std::size_t reconciled = 0;
    std::string example;
    for (std::size_t c = 0; c < g.comms.size(); ++c) {
        std::size_t calls = SIZE_MAX;
        for (const auto& m : issued[c]) calls = std::min(calls, m.size());
        for (std::size_t k = 0; k < calls && calls != SIZE_MAX; ++k) {
            const Op& first = g.ops[issued[c].front()[k].index()];
            if (takes_member_sizes(first.collective)) continue;
            std::uint64_t lo = UINT64_MAX, hi = 0;
            bool same_kind = true;
            for (const auto& m : issued[c]) {
                const Op& op = g.ops[m[k].index()];
                same_kind = same_kind && op.collective == first.collective;
                lo = std::min(lo, op.bytes());
                hi = std::max(hi, op.bytes());
            }
            if (!same_kind || lo == hi || lo == 0) continue;  // a kind mismatch or unsized member: validation says
            for (const auto& m : issued[c]) g.ops[m[k].index()].set_bytes(hi);
            if (reconciled++ == 0)
                example = fmt::format("{} #{} on '{}': {} to {} bytes", collective_kind_name(first.collective), k,
                                      g.comms[c].name, lo, hi);
        }
    }
    if (reconciled > 0)
        engine::layer_log("traces").warn(
            "{}: {} collectives whose ranks traced different sizes take the largest "
            "(first: {})",
            file, reconciled, example);
}

}  // namespace clustersim::traces
