// The memory walk over alloc/free ops.
#include "sim/memory_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/units.h"

namespace clustersim::sim {

std::vector<traces::RankMemory> memory_peaks(const traces::OpGraph& g, const topo::Cluster& cluster,
                                             const std::vector<std::uint32_t>& rank_to_gpu) {
    std::vector<std::array<double, traces::memory_use_count>> held(g.rank_count);
    std::vector<traces::RankMemory> peaks(g.rank_count);
    std::vector<std::uint8_t> allocates(g.rank_count, 0);
    for (const traces::Op& op : g.ops) {
        if (op.kind != traces::OpKind::alloc && op.kind != traces::OpKind::free) continue;
        const std::size_t r = g.rank_of(op).index();
        auto& h = held[r];
        const auto use = static_cast<std::size_t>(op.memory());
        h[use] += op.kind == traces::OpKind::alloc ? static_cast<double>(op.bytes()) : -static_cast<double>(op.bytes());
        allocates[r] = 1;
        double total = 0;
        for (const double b : h) total += b;
        if (total > peaks[r].peak_bytes) {
            peaks[r].peak_bytes = total;
            peaks[r].at_peak = h;
        }
    }
    std::vector<traces::RankMemory> out;
    const auto& gpus = cluster.gpus();
    for (std::uint32_t r = 0; r < g.rank_count; ++r) {
        if (!allocates[r]) continue;
        traces::RankMemory m = peaks[r];
        m.rank = g.job_rank(traces::RankId{r});
        const std::uint32_t gpu = rank_to_gpu.empty() ? m.rank : rank_to_gpu[r];
        if (gpu < gpus.size()) m.hbm_bytes = static_cast<double>(cluster.gpu_spec(gpus[gpu]).hbm_bytes);
        out.push_back(m);
    }
    return out;
}

std::string describe_memory(const traces::RankMemory& m) {
    std::string parts;
    for (std::size_t u = 0; u < traces::memory_use_count; ++u) {
        if (m.at_peak[u] <= 0) continue;
        parts +=
            fmt::format("{}{} {}", parts.empty() ? "" : ", ",
                        traces::memory_use_name(static_cast<traces::MemoryUse>(u)), engine::format_bytes(m.at_peak[u]));
    }
    return fmt::format("rank {}: peak {} of {} HBM ({})", m.rank, engine::format_bytes(m.peak_bytes),
                       engine::format_bytes(m.hbm_bytes), parts);
}

const traces::RankMemory* worst_overflow(const std::vector<traces::RankMemory>& peaks) {
    const traces::RankMemory* worst = nullptr;
    for (const auto& m : peaks) {
        if (m.hbm_bytes <= 0 || m.peak_bytes <= m.hbm_bytes) continue;
        if (!worst || m.peak_bytes - m.hbm_bytes > worst->peak_bytes - worst->hbm_bytes) worst = &m;
    }
    return worst;
}

}  // namespace clustersim::sim
