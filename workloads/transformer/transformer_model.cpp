// Parameter counts of a transformer and the preset table.
#include "workloads/transformer/transformer_model.h"

#include <algorithm>

#include "engine/yaml_reader.h"

namespace clustersim::workloads {

extern const char* const builtin_model_presets[];  // model_presets_data.cpp, generated from workloads/models
extern const std::size_t builtin_model_preset_count;

const char* ffn_kind_name(FfnKind kind) { return kind == FfnKind::swiglu ? "swiglu" : "gelu"; }

double TransformerModel::attention_params() const {
    const double h = hidden, d = head_dim();
    return h * (heads * d) + 2 * h * (kv_heads * d) + (heads * d) * h;
}

double TransformerModel::mlp_params(double inner) const {
    return (ffn == FfnKind::swiglu ? 3.0 : 2.0) * hidden * inner;
}

double TransformerModel::layer_params(std::uint32_t layer) const {
    const double norms = 2.0 * hidden;
    if (!moe_layer(layer)) return norms + attention_params() + mlp_params(ffn_hidden);
    return norms + attention_params() + double(hidden) * experts +
           (experts + shared_experts) * mlp_params(moe_ffn_hidden);
}

double TransformerModel::active_layer_params(std::uint32_t layer) const {
    if (!moe_layer(layer)) return layer_params(layer);
    return 2.0 * hidden + attention_params() + double(hidden) * experts +
           (top_k + shared_experts) * mlp_params(moe_ffn_hidden);
}

double TransformerModel::embedding_params() const { return (tie_embeddings ? 1.0 : 2.0) * double(vocab) * hidden; }

double TransformerModel::total_params() const {
    double total = embedding_params() + hidden;  // final norm
    for (std::uint32_t l = 0; l < layers; ++l) total += layer_params(l);
    return total;
}

double TransformerModel::active_matmul_params() const {
    double total = double(vocab) * hidden;  // the output layer (logits)
    for (std::uint32_t l = 0; l < layers; ++l) total += active_layer_params(l) - 2.0 * hidden;
    return total;
}

const std::vector<ModelPreset>& model_presets() {
    static const std::vector<ModelPreset> presets = [] {
        std::vector<ModelPreset> out;
        for (std::size_t i = 0; i < builtin_model_preset_count; ++i) {
            const std::string_view text = builtin_model_presets[i];
            const auto doc = engine::YamlValue::load_string(text, "workloads/models");
            out.push_back(ModelPreset{doc.require("name").as_string(), doc.require("summary").as_string(),
                                      doc.require("source").as_string(), text});
        }
        std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
        return out;
    }();
    return presets;
}

const ModelPreset* find_model_preset(std::string_view name) {
    for (const auto& p : model_presets())
        if (p.name == name) return &p;
    return nullptr;
}

}  // namespace clustersim::workloads
