// Decoding of the GPU catalogue YAML; the built-in text is generated from topologies/data/gpus.yaml.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "engine/yaml_reader.h"
#include "topologies/gpu_spec.h"

namespace clustersim::topo {

extern const char* const builtin_gpu_catalogue_yaml;  // gpu_catalogue_data.cpp, generated

double GpuSpec::peak_flops(Dtype dtype) const {
    switch (dtype) {
        case Dtype::fp32:
            return fp32_flops;
        case Dtype::tf32:
            return tf32_flops;
        case Dtype::fp16:
            return fp16_flops;
        case Dtype::fp8:
            return fp8_flops;
    }
    return fp32_flops;
}

GpuCatalogue GpuCatalogue::parse(std::string_view yaml_text, const std::string& name) {
    const auto doc = engine::YamlValue::load_string(yaml_text, name);
    doc.expect_only_keys({"gpus"});
    GpuCatalogue catalogue;
    for (const auto& g : doc.require("gpus").elements()) {
        g.expect_only_keys({"name", "aliases", "fp32_tflops", "tf32_tflops", "fp16_tflops", "fp8_tflops", "hbm",
                            "hbm_bandwidth", "nvlink_bandwidth", "sms", "gemm_efficiency", "attention_efficiency",
                            "gemm_tiles", "kernel_overhead", "nvlink_efficiency"});
        GpuSpec spec;
        spec.name = g.require("name").as_string();
        if (auto aliases = g.find("aliases")) {
            for (const auto& a : aliases->elements()) spec.aliases.push_back(a.as_string());
        }
        spec.fp32_flops = g.require("fp32_tflops").as_double() * 1e12;
        spec.tf32_flops = g.require("tf32_tflops").as_double() * 1e12;
        spec.fp16_flops = g.require("fp16_tflops").as_double() * 1e12;
        spec.fp8_flops = g.require("fp8_tflops").as_double() * 1e12;
        spec.hbm_bytes = g.require("hbm").as_bytes();
        spec.hbm_bandwidth_bytes_per_s = g.require("hbm_bandwidth").as_rate();
        spec.nvlink_bandwidth_bytes_per_s = g.require("nvlink_bandwidth").as_rate();
        spec.sms = static_cast<int>(g.require("sms").as_int());
        if (spec.sms < 1 || spec.sms > 100'000) g.require("sms").fail("expected a count from 1 to 100000");
        auto fraction = [&](const char* key, double& out) {
            const auto v = g.require(key);
            out = v.as_double();
            if (!(out > 0 && out <= 1)) v.fail("expected a fraction in (0, 1]");
        };
        fraction("gemm_efficiency", spec.gemm_efficiency);
        fraction("attention_efficiency", spec.attention_efficiency);
        if (g.find("nvlink_efficiency")) fraction("nvlink_efficiency", spec.nvlink_efficiency);
        spec.gemm_tiles.clear();
        for (const auto& tile : g.require("gemm_tiles").elements()) {
            const auto dims = tile.elements();
            if (dims.size() != 2) tile.fail("expected a tile [M, N]");
            const auto m = dims[0].as_int(), n = dims[1].as_int();
            if (m < 1 || n < 1 || m > 4096 || n > 4096) tile.fail("expected tile sizes from 1 to 4096");
            spec.gemm_tiles.emplace_back(static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(n));
        }
        if (spec.gemm_tiles.empty()) g.require("gemm_tiles").fail("expected at least one tile");
        spec.kernel_overhead_ps = g.require("kernel_overhead").as_time().count();
        if (catalogue.find(spec.name)) g.require("name").fail(fmt::format("duplicate GPU '{}'", spec.name));
        catalogue.gpus_.push_back(std::move(spec));
    }
    return catalogue;
}

const GpuCatalogue& GpuCatalogue::builtin() {
    static const GpuCatalogue catalogue = parse(builtin_gpu_catalogue_yaml, "topologies/data/gpus.yaml");
    return catalogue;
}

namespace {
bool same_name(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}
}  // namespace

std::optional<std::size_t> GpuCatalogue::find(std::string_view name) const {
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
        if (same_name(gpus_[i].name, name)) return i;
        for (const auto& alias : gpus_[i].aliases) {
            if (same_name(alias, name)) return i;
        }
    }
    return std::nullopt;
}

std::string GpuCatalogue::names() const {
    std::string out;
    for (const auto& g : gpus_) out += (out.empty() ? "" : ", ") + g.name;
    return out;
}

}  // namespace clustersim::topo
