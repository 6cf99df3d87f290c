// A decoder-only transformer's dimensions (dense or mixture-of-experts) and its parameter counts, from a preset
// (workloads/models/*.yaml) or given key by key. Counts follow the layer structure the generator emits
// (docs/models.md "Transformer generator"): no linear biases, two norms per layer and a final norm.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::workloads {

enum class FfnKind : std::uint8_t { gelu, swiglu };

struct TransformerModel {
    std::string name;  // the preset's name, or "" for a model given by its dimensions
    std::uint32_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn_hidden = 0, vocab = 0, seq_len = 0;
    FfnKind ffn = FfnKind::gelu;
    bool tie_embeddings = false;
    // Mixture of experts: `experts` routed experts (0: dense) of moe_ffn_hidden each, top_k per token, plus
    // shared_experts always used; the first dense_layers layers are dense, then every moe_every-th layer is MoE.
    std::uint32_t experts = 0, top_k = 1, moe_ffn_hidden = 0, moe_every = 1, shared_experts = 0, dense_layers = 0;

    [[nodiscard]] std::uint32_t head_dim() const { return hidden / heads; }
    [[nodiscard]] bool moe_layer(std::uint32_t layer) const {
        return experts > 0 && layer >= dense_layers && (layer - dense_layers) % moe_every == 0;
    }
    /// Q, K, V and output projection weights of one layer.
    [[nodiscard]] double attention_params() const;
    /// The weights of one MLP of inner size `inner` (two matrices, three for SwiGLU).
    [[nodiscard]] double mlp_params(double inner) const;
    /// All weights of `layer` (norms, attention, MLP or router, experts and shared experts).
    [[nodiscard]] double layer_params(std::uint32_t layer) const;
    /// The weights a token uses in `layer` (top_k routed experts, not all of them).
    [[nodiscard]] double active_layer_params(std::uint32_t layer) const;
    /// Input embedding (and the output layer when not tied).
    [[nodiscard]] double embedding_params() const;
    [[nodiscard]] double total_params() const;
    /// Parameters a token's matrix multiplications use: active layer weights plus the output layer.
    [[nodiscard]] double active_matmul_params() const;
};

const char* ffn_kind_name(FfnKind kind);

struct ModelPreset {
    std::string name;
    std::string summary;
    std::string source;
    std::string_view yaml;  // the preset file's text
};

/// The presets built from workloads/models/*.yaml, in name order.
const std::vector<ModelPreset>& model_presets();
/// The preset named `name`, or nullptr.
const ModelPreset* find_model_preset(std::string_view name);

}  // namespace clustersim::workloads
