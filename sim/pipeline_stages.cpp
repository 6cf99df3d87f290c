// Per-stage compute and GPUs.
#include "sim/pipeline_stages.h"

#include <algorithm>

namespace clustersim::sim {

std::vector<traces::StageReport> stage_reports(const traces::OpGraph& g,
                                               const std::vector<traces::RankBreakdown>& ranks,
                                               const topo::Cluster& cluster,
                                               const std::vector<std::uint32_t>& rank_to_gpu) {
    std::vector<traces::StageReport> out;
    if (g.rank_stage.size() != g.rank_count || ranks.size() != g.rank_count) return out;
    const std::uint32_t stages = *std::max_element(g.rank_stage.begin(), g.rank_stage.end()) + 1;
    out.resize(stages);
    std::vector<std::vector<std::string>> types(stages);
    for (std::uint32_t r = 0; r < g.rank_count; ++r) {
        traces::StageReport& s = out[g.rank_stage[r]];
        s.stage = g.rank_stage[r];
        ++s.ranks;
        s.compute = std::max(s.compute, ranks[r].compute);
        const std::uint32_t gpu = rank_to_gpu.empty() ? g.job_rank(traces::RankId{r}) : rank_to_gpu[r];
        const std::string& name = cluster.gpu_spec(cluster.gpus().at(gpu)).name;
        auto& list = types[s.stage];
        if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
    }
    for (std::uint32_t k = 0; k < stages; ++k) {
        out[k].stage = k;
        for (const std::string& t : types[k]) out[k].gpus += (out[k].gpus.empty() ? "" : ", ") + t;
    }
    return out;
}

}  // namespace clustersim::sim
