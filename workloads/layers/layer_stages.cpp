// The layers generator's pipeline stages: reading pp, microbatches, schedule and stage_layers, and the split of
// a layer list into contiguous stages balancing their forward FLOPs (see layer_builder.h).
#include <algorithm>

#include <fmt/format.h>

#include "engine/split_list.h"
#include "workloads/layers/layer_builder.h"

namespace clustersim::workloads {

/// Stage boundaries splitting the layers' forward FLOPs as evenly as contiguous stages can: the least maximum
/// stage load (a binary search over it, each candidate checked greedily), then the stages filled up to it in
/// order, a stage cut early only where every remaining layer must start a stage of its own. Returns pp + 1 entries:
/// each stage's first layer, then the layer count.
std::vector<std::uint32_t> balanced_stages(const LayerModel& model, std::uint32_t pp) {
    const auto& layers = model.layers;
    const auto count = static_cast<std::uint32_t>(layers.size());
    auto stages_needed = [&](double limit) {
        std::uint32_t stages = 1;
        double load = 0;
        for (const LayerSpec& l : layers) {
            if (load > 0 && load + l.forward_flops > limit) {
                ++stages;
                load = 0;
            }
            load += l.forward_flops;
        }
        return stages;
    };
    double lo = 0, hi = 0;
    for (const LayerSpec& l : layers) {
        lo = std::max(lo, l.forward_flops);
        hi += l.forward_flops;
    }
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
        const double mid = (lo + hi) / 2;
        (stages_needed(mid) <= pp ? hi : lo) = mid;
    }
    std::vector<std::uint32_t> first{0};
    double load = 0;
    for (std::uint32_t l = 0; l < count; ++l) {
        const auto left = static_cast<std::uint32_t>(pp - first.size());  // stages still to open
        const bool full = load > 0 && load + layers[l].forward_flops > hi;
        if (left > 0 && (full || count - l == left)) {
            first.push_back(l);
            load = 0;
        }
        load += layers[l].forward_flops;
    }
    first.push_back(count);
    return first;
}

void read_pipeline(const engine::Params& p, LayerPlan& plan) {
    plan.pp = static_cast<std::uint32_t>(p.integer_in("pp", 1, 1 << 12));
    plan.microbatches = static_cast<std::uint32_t>(p.integer_in("microbatches", 1, 1 << 16));
    const auto schedule = traces::parse_pipeline_schedule(p.string("schedule"));
    if (!schedule) p.fail("schedule", fmt::format("unknown schedule '{}' (known: gpipe, 1f1b)", p.string("schedule")));
    plan.schedule = *schedule;
    const std::size_t layers = plan.model.layers.size();
    if (plan.pp > layers)
        p.fail("pp", fmt::format("{} pipeline stages for {} layers: each stage needs one", plan.pp, layers));
    if (plan.batch % plan.microbatches != 0)
        p.fail("microbatches",
               fmt::format("{} micro-batches do not split the batch of {} per replica", plan.microbatches, plan.batch));
    if (plan.pipelined() && (plan.averaging != Averaging::allreduce || plan.local_steps > 1 || plan.offload ||
                             plan.sampling() || plan.averaging_group > 0))
        p.fail(plan.pp > 1 ? "pp" : "microbatches",
               "pipelines and micro-batches reduce the gradients with DDP's all-reduce every step: averaging: "
               "allreduce, local_steps 1, without offload, clients_per_round or averaging_group");
    const std::string& given = p.string("stage_layers");
    if (given.empty()) {
        plan.stage_first = plan.pp > 1 ? balanced_stages(plan.model, plan.pp)
                                       : std::vector<std::uint32_t>{0, static_cast<std::uint32_t>(layers)};
        return;
    }
    plan.stage_first = {0};
    for (const std::string& item : engine::split_list(given)) {
        std::uint32_t count = 0;
        bool ok = !item.empty() && item.size() < 9;
        for (const char c : item) {
            if (c == ' ') continue;
            ok = ok && c >= '0' && c <= '9';
            if (ok) count = count * 10 + static_cast<std::uint32_t>(c - '0');
        }
        if (!ok || count == 0)
            p.fail("stage_layers", fmt::format("expected layer counts above 0 separated by commas, got \"{}\"", given));
        plan.stage_first.push_back(plan.stage_first.back() + count);
    }
    if (plan.stage_first.size() != plan.pp + 1 || plan.stage_first.back() != layers)
        p.fail("stage_layers",
               fmt::format("\"{}\" gives {} stages of {} layers; the plan has pp = {} and {} layers", given,
                           plan.stage_first.size() - 1, plan.stage_first.back(), plan.pp, layers));
}

}  // namespace clustersim::workloads
