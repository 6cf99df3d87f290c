// A model as a list of layers: per-sample forward FLOPs, parameters and output activations, with the GEMM shape
// a convolution or a linear layer runs as (implicit GEMM). Built-in presets (ResNet-50, VGG-16) are computed from
// their published architectures; any other model is a YAML list (docs/formats.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/error.h"

namespace clustersim::workloads {

struct LayerSpec {
    std::string name;
    double forward_flops = 0;              // per sample (2 x multiply-accumulates)
    std::uint64_t params = 0;              // weights and biases (including normalization)
    std::uint64_t activations = 0;         // output elements per sample (kept for the backward)
    std::uint64_t gemm_m = 0;              // implicit GEMM rows per sample (output pixels), 0: not a GEMM
    std::uint32_t gemm_n = 0, gemm_k = 0;  // output channels; input channels x kernel area
    bool norm = false;  // followed by a normalization and an activation (memory-bound kernels on its output)
    bool operator==(const LayerSpec&) const = default;
};

struct LayerModel {
    std::string name;
    std::vector<LayerSpec> layers;
    [[nodiscard]] double forward_flops() const;
    [[nodiscard]] std::uint64_t params() const;
};

/// ResNet-50 (He et al. 2016, Table 1; torchvision's v1.5 with the stride in the 3x3 convolution): 53
/// convolutions, each with its batch norm, and the classifier; 224 x 224 inputs, 1,000 classes.
LayerModel resnet50();
/// VGG-16 (Simonyan and Zisserman 2015, configuration D): 13 convolutions and 3 fully connected layers.
LayerModel vgg16();
/// A preset by name (resnet50, vgg16) or a YAML layer list from a file (relative paths from `base_dir`).
LayerModel load_layer_model(std::string_view name, const std::string& base_dir, const engine::SourceLocation& where);
/// Names of the presets, for messages and --help.
const char* layer_model_presets();

}  // namespace clustersim::workloads
