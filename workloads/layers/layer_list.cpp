// The layer-list presets, computed from the architectures, and the YAML layer list.
#include "workloads/layers/layer_list.h"

#include <filesystem>

#include <fmt/format.h>

#include "engine/yaml_reader.h"

namespace clustersim::workloads {

double LayerModel::forward_flops() const {
    double total = 0;
    for (const auto& l : layers) total += l.forward_flops;
    return total;
}

std::uint64_t LayerModel::params() const {
    std::uint64_t total = 0;
    for (const auto& l : layers) total += l.params;
    return total;
}

namespace {

/// A k x k convolution from `in` to `out` channels giving an `size` x `size` output, with `norm` a batch norm
/// after it (scale and shift per channel) or `bias` per output channel.
LayerSpec conv(std::string name, std::uint32_t in, std::uint32_t out, std::uint32_t k, std::uint32_t size, bool norm,
               bool bias) {
    LayerSpec l;
    l.name = std::move(name);
    const std::uint64_t pixels = std::uint64_t{size} * size;
    const std::uint64_t weights = std::uint64_t{in} * out * k * k;
    l.forward_flops = 2.0 * static_cast<double>(weights) * static_cast<double>(pixels);
    l.params = weights + (norm ? 2ULL * out : 0) + (bias ? out : 0);
    l.activations = pixels * out;
    l.gemm_m = pixels;
    l.gemm_n = out;
    l.gemm_k = in * k * k;
    l.norm = norm;
    return l;
}

LayerSpec linear(std::string name, std::uint32_t in, std::uint32_t out) {
    LayerSpec l;
    l.name = std::move(name);
    const std::uint64_t weights = std::uint64_t{in} * out;
    l.forward_flops = 2.0 * static_cast<double>(weights);
    l.params = weights + out;
    l.activations = out;
    l.gemm_m = 1;
    l.gemm_n = out;
    l.gemm_k = in;
    return l;
}

}  // namespace

LayerModel resnet50() {
    LayerModel m;
    m.name = "resnet50";
    m.layers.push_back(conv("conv1", 3, 64, 7, 112, true, false));  // then a 3x3 max pool to 56 x 56
    struct Stage {
        std::uint32_t blocks, mid, out, size;
    };
    std::uint32_t in = 64, prev_size = 56;
    const Stage stages[] = {{3, 64, 256, 56}, {4, 128, 512, 28}, {6, 256, 1024, 14}, {3, 512, 2048, 7}};
    for (std::size_t s = 0; s < 4; ++s) {
        const Stage& st = stages[s];
        for (std::uint32_t b = 0; b < st.blocks; ++b) {
            const std::string block = fmt::format("layer{}.{}", s + 1, b);
            // The first block's 1x1 reduction runs at the previous resolution; its 3x3 strides down (v1.5).
            const std::uint32_t reduce_size = b == 0 ? prev_size : st.size;
            m.layers.push_back(conv(block + ".conv1", in, st.mid, 1, reduce_size, true, false));
            m.layers.push_back(conv(block + ".conv2", st.mid, st.mid, 3, st.size, true, false));
            m.layers.push_back(conv(block + ".conv3", st.mid, st.out, 1, st.size, true, false));
            if (b == 0) m.layers.push_back(conv(block + ".downsample", in, st.out, 1, st.size, true, false));
            in = st.out;
        }
        prev_size = st.size;
    }
    m.layers.push_back(linear("fc", 2048, 1000));  // after a global average pool
    return m;
}

LayerModel vgg16() {
    LayerModel m;
    m.name = "vgg16";
    // Configuration D: channel widths per block, 3x3 convolutions with biases, a 2x2 max pool after each block.
    struct Block {
        std::uint32_t convs, channels, size;
    };
    const Block blocks[] = {{2, 64, 224}, {2, 128, 112}, {3, 256, 56}, {3, 512, 28}, {3, 512, 14}};
    std::uint32_t in = 3;
    for (std::size_t b = 0; b < 5; ++b) {
        for (std::uint32_t c = 0; c < blocks[b].convs; ++c) {
            m.layers.push_back(
                conv(fmt::format("conv{}_{}", b + 1, c + 1), in, blocks[b].channels, 3, blocks[b].size, false, true));
            in = blocks[b].channels;
        }
    }
    m.layers.push_back(linear("fc6", 512 * 7 * 7, 4096));
    m.layers.push_back(linear("fc7", 4096, 4096));
    m.layers.push_back(linear("fc8", 4096, 1000));
    return m;
}

const char* layer_model_presets() { return "resnet50, vgg16"; }

namespace {

LayerModel read_layer_file(const std::string& path) {
    const auto doc = engine::YamlValue::load_file(path);
    doc.expect_only_keys({"name", "source", "layers"});
    LayerModel m;
    m.name = doc.find("name") ? doc.require("name").as_string() : std::filesystem::path(path).stem().string();
    const auto list = doc.require("layers");
    if (!list.is_sequence() || list.elements().empty()) list.fail("expected a non-empty list of layers");
    for (const auto& entry : list.elements()) {
        entry.expect_only_keys({"name", "flops", "params", "activations", "gemm", "norm", "repeat"});
        LayerSpec l;
        l.name = entry.require("name").as_string();
        const auto flops = entry.require("flops");
        l.forward_flops = flops.as_double();
        if (!(l.forward_flops >= 0) || l.forward_flops > 1e18)
            flops.fail(fmt::format("expected forward FLOPs per sample from 0 to 1e18, got {}", l.forward_flops));
        auto count = [&](const char* key, std::int64_t max) -> std::uint64_t {
            const auto v = entry.find(key);
            if (!v) return 0;
            const std::int64_t n = v->as_int();
            if (n < 0 || n > max) v->fail(fmt::format("expected an integer from 0 to {}, got {}", max, n));
            return static_cast<std::uint64_t>(n);
        };
        l.params = count("params", std::int64_t{1} << 40);
        l.activations = count("activations", std::int64_t{1} << 40);
        if (const auto gemm = entry.find("gemm")) {
            // [m per sample, n, k]
            const auto dims = gemm->is_sequence() ? gemm->elements() : std::vector<engine::YamlValue>{};
            if (dims.size() != 3) gemm->fail("expected [m per sample, n, k]");
            for (const auto& d : dims) {
                const std::int64_t v = d.as_int();
                if (v < 1 || v > (std::int64_t{1} << 31)) d.fail(fmt::format("expected 1 to 2^31, got {}", v));
            }
            l.gemm_m = static_cast<std::uint64_t>(dims[0].as_int());
            l.gemm_n = static_cast<std::uint32_t>(dims[1].as_int());
            l.gemm_k = static_cast<std::uint32_t>(dims[2].as_int());
        }
        if (const auto norm = entry.find("norm")) l.norm = norm->as_bool();
        const std::uint64_t repeat = entry.find("repeat") ? count("repeat", 100'000) : 1;
        if (repeat == 0) entry.require("repeat").fail("expected a repeat count of at least 1");
        if (m.layers.size() + repeat > 1'000'000) entry.fail("more than 1,000,000 layers");
        for (std::uint64_t r = 0; r < repeat; ++r) {
            m.layers.push_back(l);
            if (repeat > 1) m.layers.back().name = fmt::format("{}.{}", l.name, r);
        }
    }
    return m;
}

}  // namespace

LayerModel load_layer_model(std::string_view name, const std::string& base_dir, const engine::SourceLocation& where) {
    if (name == "resnet50") return resnet50();
    if (name == "vgg16") return vgg16();
    if (name.ends_with(".yaml") || name.ends_with(".yml")) {
        std::filesystem::path path(name);
        if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec))
            throw engine::InputError(where, fmt::format("no layer list at '{}'", path.string()));
        return read_layer_file(path.string());
    }
    throw engine::InputError(
        where, fmt::format("unknown model '{}' (known: {}, or a YAML layer list file)", name, layer_model_presets()));
}

}  // namespace clustersim::workloads
