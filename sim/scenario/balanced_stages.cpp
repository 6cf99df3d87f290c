// Layers per pipeline stage in proportion to the stages' GPU speeds.
#include "sim/scenario/balanced_stages.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/replay/replay.h"
#include "workloads/transformer/rank_grid.h"
#include "workloads/transformer/transformer_plan.h"

namespace clustersim::sim {

std::vector<std::uint32_t> balance_layers(std::uint32_t layers, const std::vector<double>& layer_s,
                                          const std::vector<double>& extra_s) {
    const std::size_t n = layer_s.size();
    std::vector<std::uint32_t> out(n, 1);
    // Each next layer to the stage that would finish it soonest: optimal for min-max of linear costs.
    for (std::uint32_t given = static_cast<std::uint32_t>(n); given < layers; ++given) {
        std::size_t best = 0;
        double best_time = 0;
        for (std::size_t k = 0; k < n; ++k) {
            const double t = extra_s[k] + (out[k] + 1) * layer_s[k];
            if (k == 0 || t < best_time) {
                best = k;
                best_time = t;
            }
        }
        ++out[best];
    }
    return out;
}

namespace {

/// Per stage, on its first rank's compute stream: the time of its layers (kernels and tensor-parallel
/// collectives, from the last member's arrival) and of the rest (embedding, output layer, optimizer).
struct StageTimes {
    std::vector<double> layer_s, extra_s;
};

/// The even plan `even` with `microbatches` per replica, replayed (rank r on GPU r, default options).
StageTimes time_stages(engine::Params even, std::uint32_t microbatches, const workloads::TransformerPlan& full,
                       const topo::Cluster& cluster, traces::OpGraph (*build)(const engine::Params&)) {
    even.set("global_batch_size", fmt::format("{}", std::uint64_t{microbatches} * full.micro_batch_size * full.dp));
    const traces::OpGraph g = build(even);
    if (g.rank_count > cluster.gpus().size())
        even.fail("placement",
                  fmt::format("the plan has {} ranks but the topology {} GPUs", g.rank_count, cluster.gpus().size()));
    StageTimes out{std::vector<double>(full.pp, 0), std::vector<double>(full.pp, 0)};
    if (g.rank_stage.size() != g.rank_count) return out;
    const ReplayResult run = replay(g, cluster, ReplayOptions{});
    std::vector<std::uint32_t> timed_rank(full.pp, UINT32_MAX);
    for (std::uint32_t r = 0; r < g.rank_count; ++r)
        if (timed_rank[g.rank_stage[r]] == UINT32_MAX) timed_rank[g.rank_stage[r]] = r;
    std::size_t start_at = 0;  // (ops in ascending order: each search of a start starts at the last one found)
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const traces::Op& op = g.ops[i];
        const traces::RankId rank = g.rank_of(op);
        const std::uint32_t stage = g.rank_stage[rank.index()];
        if (timed_rank[stage] != rank.value || g.streams[op.stream.index()].name != "compute") continue;
        if (op.kind != traces::OpKind::compute && op.kind != traces::OpKind::collective) continue;
        const traces::OpTiming t = run.timeline.timing(traces::OpId::from_index(i), start_at);
        const double seconds = engine::to_seconds(t.end - t.start);
        const std::string& name = g.names[op.name];
        const bool per_layer = op.kind == traces::OpKind::collective ||
                               (name.size() > 1 && name[0] == 'L' && std::isdigit(static_cast<unsigned char>(name[1])));
        (per_layer ? out.layer_s : out.extra_s)[stage] += seconds;
    }
    return out;
}

}  // namespace

std::string resolve_balanced_stages(engine::Params& params, const topo::Cluster& cluster,
                                    traces::OpGraph (*build)(const engine::Params&)) {
    const auto& specs = params.values();
    const bool has = std::any_of(specs.begin(), specs.end(), [](const auto& v) { return v.spec->name == "placement"; });
    if (!has || params.string("placement") != "balanced") return {};
    if (!params.string("stage_layers").empty())
        params.fail("stage_layers", "give stage_layers (an explicit split) or placement: balanced, not both");
    // A first plan with the layers as even as they go, to time each stage's kernels on its GPUs.
    params.set("placement", "even");
    engine::Params even = params;
    // The model's layers and the stages, read before any plan: an even split need not divide the layers.
    if (params.integer("virtual_stages") > 1) params.fail("placement", "placement: balanced needs virtual_stages: 1");
    const std::uint32_t layers = workloads::read_transformer_model(params).layers;
    const auto pp = static_cast<std::uint32_t>(std::max<std::int64_t>(1, params.integer("pp")));
    if (layers < pp) params.fail("placement", fmt::format("{} layers cannot fill {} stages", layers, pp));
    std::vector<std::uint32_t> first(pp, layers / pp);
    for (std::uint32_t s = 0; s < layers % pp; ++s) ++first[s];
    even.set("stage_layers", fmt::format("{}", fmt::join(first, ",")));
    even.set("fold", "none");
    // The plan's micro-batches per replica, read from the plan as the generator sees it.
    const workloads::TransformerPlan full = workloads::read_transformer_plan(even);
    if (full.pp < 2) params.fail("placement", "the plan has no pipeline stages to balance (pp: 1)");
    // Each stage's time is linear in the micro-batches (the same kernels for each; the optimizer once): two
    // small plans, of one and two micro-batches per replica, give both terms, extrapolated to the plan's count.
    // (Replaying the whole even plan would cost as much as the run itself.)
    const StageTimes one = time_stages(even, 1, full, cluster, build);
    const StageTimes two = time_stages(even, 2, full, cluster, build);
    std::vector<double> layer_s(pp, 0), extra_s(pp, 0);
    const double more = static_cast<double>(full.microbatches) - 1.0;
    for (std::uint32_t s = 0; s < pp; ++s) {
        layer_s[s] = one.layer_s[s] + more * (two.layer_s[s] - one.layer_s[s]);
        extra_s[s] = one.extra_s[s] + more * (two.extra_s[s] - one.extra_s[s]);
    }
    for (std::uint32_t s = 0; s < pp; ++s) layer_s[s] /= first[s];
    const std::vector<std::uint32_t> split = balance_layers(layers, layer_s, extra_s);
    params.set("stage_layers", fmt::format("{}", fmt::join(split, ",")));
    std::string line = "placement: balanced, by the stages' times in the even split:";
    for (std::uint32_t s = 0; s < pp; ++s)
        line += fmt::format(" stage {} {} layers of {} each + {};", s, split[s],
                            engine::format_time(engine::from_seconds(layer_s[s])),
                            engine::format_time(engine::from_seconds(extra_s[s])));
    line.pop_back();
    return line;
}

}  // namespace clustersim::sim
