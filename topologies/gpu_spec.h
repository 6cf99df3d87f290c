// GPU specifications and the catalogue shipped with clustersim (topologies/data/gpus.yaml, built in).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace clustersim::topo {

/// Datatypes with distinct peak rates.
enum class Dtype : std::uint8_t { fp32, tf32, fp16, fp8 };

struct GpuSpec {
    std::string name;
    std::vector<std::string> aliases;
    double fp32_flops = 0;  // peak dense FLOP/s
    double tf32_flops = 0;
    double fp16_flops = 0;  // FP16 and BF16
    double fp8_flops = 0;
    std::uint64_t hbm_bytes = 0;
    double hbm_bandwidth_bytes_per_s = 0;
    double nvlink_bandwidth_bytes_per_s = 0;  // per direction, all links together
    int sms = 0;
    // Compute-model constants (docs/models.md "Compute model").
    double gemm_efficiency = 0.8;       // best fraction of peak a GEMM reaches
    double attention_efficiency = 0.5;  // fraction of peak of fused attention kernels
    double nvlink_efficiency = 0.8;     // fraction of raw NVLink bandwidth NCCL's transfers reach
    std::vector<std::pair<std::uint32_t, std::uint32_t>> gemm_tiles = {{128, 128}};  // output tiles (M x N)
    std::int64_t kernel_overhead_ps = 3'000'000;                                     // per kernel

    [[nodiscard]] double peak_flops(Dtype dtype) const;
    bool operator==(const GpuSpec&) const = default;
};

/// The GPUs clustersim knows, in catalogue order.
class GpuCatalogue {
public:
    /// The built-in catalogue (parsed once from the embedded YAML).
    static const GpuCatalogue& builtin();
    /// Parses a catalogue document; errors are located in `name`.
    static GpuCatalogue parse(std::string_view yaml_text, const std::string& name);

    [[nodiscard]] const std::vector<GpuSpec>& gpus() const { return gpus_; }
    /// Index of the GPU named `name` or one of its aliases (case-insensitive), or nullopt.
    [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const;
    /// "V100, A100-40GB, ..." for messages.
    [[nodiscard]] std::string names() const;

private:
    std::vector<GpuSpec> gpus_;
};

}  // namespace clustersim::topo
