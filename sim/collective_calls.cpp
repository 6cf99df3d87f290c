#include "sim/collective_calls.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "sim/analysis.h"
#include "sim/collectives/collective_algorithm.h"
#include "sim/collectives/nccl_tuner.h"

namespace clustersim::sim {

std::vector<traces::CollectiveCalls> collective_calls(const traces::OpGraph& g,
                                                      const std::vector<CollectiveRecord>& records) {
    using Key = std::tuple<std::string, traces::CollectiveKind, std::string, std::string, std::uint32_t>;
    struct Sum {
        std::uint64_t calls = 0, bytes = 0;
        engine::Time waiting{}, transferring{};
        double model_us = 0;
    };
    std::map<Key, Sum> sums;  // ordered: no hash order in results
    for (const CollectiveRecord& r : records) {
        if (!r.op.valid() || r.end < r.last_arrival) continue;  // a call that never ran
        const traces::Communicator& c = g.comms[r.comm.index()];
        const auto members = static_cast<std::uint32_t>(c.folded() ? c.job_members.size() : c.ranks.size());
        Sum& s = sums[{communicator_family(c.name), g.ops[r.op.index()].collective,
                       collective_algorithms()[r.algorithm].name,
                       r.modelled_protocol ? nccl_protocol_name(r.protocol) : "-", members}];
        ++s.calls;
        s.bytes += r.bytes;
        s.waiting += r.last_arrival - r.first_arrival;
        s.transferring += r.end - r.last_arrival;
        s.model_us += r.nccl_predicted_us;
    }
    std::vector<traces::CollectiveCalls> rows;
    for (const auto& [key, s] : sums) {
        const auto& [group, kind, algorithm, protocol, members] = key;
        traces::CollectiveCalls row{group, kind, algorithm, protocol, members, s.calls};
        const auto n = static_cast<std::int64_t>(s.calls);
        row.bytes = s.bytes / s.calls;
        row.waiting = engine::Time{s.waiting.count() / n};
        row.transferring = engine::Time{s.transferring.count() / n};
        const double seconds = engine::to_seconds(s.transferring);
        row.busbw_gbps =
            seconds > 0 ? static_cast<double>(s.bytes) * traces::bus_bandwidth_factor(kind, members) / seconds / 1e9
                        : 0;
        row.nccl_model_us = s.model_us / static_cast<double>(s.calls);
        rows.push_back(row);
    }
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        return (a.waiting + a.transferring) * static_cast<std::int64_t>(a.calls) >
               (b.waiting + b.transferring) * static_cast<std::int64_t>(b.calls);
    });
    return rows;
}

}  // namespace clustersim::sim
