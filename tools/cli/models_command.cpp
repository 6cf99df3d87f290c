// `clustersim models [NAME]`: the transformer generator's model presets, or one preset's dimensions and
// parameter counts.
#include <cstdio>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "engine/error.h"
#include "engine/params.h"
#include "tools/cli/commands.h"
#include "workloads/transformer/transformer_plan.h"

namespace clustersim::cli {

namespace {

struct ModelsOptions {
    std::string name;
};

/// The model of preset `name`, read through the generator's own parameter checks.
workloads::TransformerModel preset_model(const std::string& name) {
    engine::Params p = engine::Params::defaults(workloads::transformer_params());
    p.set("model", name);
    p.set("world_size", "1");
    return workloads::read_transformer_plan(p).model;
}

void list_models() {
    std::printf("%-14s %10s  %s\n", "model", "params", "summary (source)");
    for (const auto& preset : workloads::model_presets()) {
        std::printf("%-14s %9.2fB  %s (%s)\n", preset.name.c_str(), preset_model(preset.name).total_params() / 1e9,
                    preset.summary.c_str(), preset.source.c_str());
    }
}

void show_model(const std::string& name) {
    if (!workloads::find_model_preset(name)) {
        std::string known;
        for (const auto& m : workloads::model_presets()) known += (known.empty() ? "" : ", ") + m.name;
        throw engine::InputError(engine::SourceLocation{"models"},
                                 fmt::format("unknown model '{}' (known: {})", name, known));
    }
    const workloads::TransformerModel m = preset_model(name);
    const auto* preset = workloads::find_model_preset(name);
    std::printf("%-16s %s\n%-16s %s\n", "model", name.c_str(), "source", preset->source.c_str());
    std::printf("%-16s %u\n%-16s %u\n%-16s %u (head dim %u)\n%-16s %u\n%-16s %u (%s)\n%-16s %u\n%-16s %u\n", "layers",
                m.layers, "hidden", m.hidden, "heads", m.heads, m.head_dim(), "kv_heads", m.kv_heads, "ffn_hidden",
                m.ffn_hidden, workloads::ffn_kind_name(m.ffn), "vocab", m.vocab, "seq_len", m.seq_len);
    if (m.experts > 0)
        std::printf("%-16s %u routed (top %u) + %u shared, inner %u, every %u layer(s) after %u dense\n", "experts",
                    m.experts, m.top_k, m.shared_experts, m.moe_ffn_hidden, m.moe_every, m.dense_layers);
    std::printf("%-16s %.3f B (%s embeddings)\n%-16s %.3f B per token in matrix multiplications\n", "parameters",
                m.total_params() / 1e9, m.tie_embeddings ? "tied" : "untied", "active", m.active_matmul_params() / 1e9);
}

}  // namespace

void add_models_command(CLI::App& app) {
    auto opts = std::make_shared<ModelsOptions>();
    auto* cmd = app.add_subcommand(
        "models",
        "List the transformer generator's model presets, or show one (workload.model in a scenario).\n"
        "Example: clustersim models llama3-70b");
    cmd->add_option("name", opts->name, "A preset to show (dimensions, parameter counts)");
    cmd->callback([opts] {
        if (opts->name.empty())
            list_models();
        else
            show_model(opts->name);
    });
}

}  // namespace clustersim::cli
