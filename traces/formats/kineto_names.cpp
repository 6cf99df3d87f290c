// Kineto names: substring rules over lowercased kernel names, as the profiler and NCCL spell them.
#include "traces/formats/kineto_names.h"

#include <algorithm>
#include <cctype>

#include "engine/error.h"

namespace clustersim::traces::kineto {

std::string lowercase(const std::string& name) {
    std::string n = name;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return n;
}

/// The kernel class from a kernel's lowercased name.
KernelClass classify(const std::string& n) {
    auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
    if (has("flash") || has("attention") || has("fmha") || has("softmax")) return KernelClass::attention;
    if (has("gemm") || has("gemv") || has("sgemm") || has("hgemm") || has("cutlass") || has("xmma") || has("_nt") ||
        has("dot_kernel"))
        return KernelClass::gemm;
    if (has("embedding")) return KernelClass::embedding;
    if (has("adam") || has("sgd") || has("adagrad") || has("optimizer")) return KernelClass::optimizer;
    if (has("elementwise") || has("reduce") || has("copy") || has("fill")) return KernelClass::elementwise;
    return KernelClass::other;
}

std::optional<CollectiveKind> nccl_kind(const std::string& name) {
    // ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_AllGather_RING_LL, ncclKernel_SendRecv_...
    static const std::pair<const char*, CollectiveKind> kinds[] = {{"AllReduce", CollectiveKind::all_reduce},
                                                                   {"AllGather", CollectiveKind::all_gather},
                                                                   {"ReduceScatter", CollectiveKind::reduce_scatter},
                                                                   {"Broadcast", CollectiveKind::broadcast},
                                                                   {"Reduce", CollectiveKind::reduce},
                                                                   {"SendRecv", CollectiveKind::all_to_all},
                                                                   {"AllToAll", CollectiveKind::all_to_all}};
    if (name.rfind("nccl", 0) != 0) return std::nullopt;
    for (const auto& [text, kind] : kinds) {
        if (name.find(text) != std::string::npos) return kind;
    }
    return std::nullopt;
}

std::pair<DataType, int> dtype_of(const std::string& text) {
    std::string t = text;
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (t == "float" || t == "float32" || t == "f32") return {DataType::fp32, 4};
    if (t == "half" || t == "float16" || t == "f16") return {DataType::fp16, 2};
    if (t == "bfloat16" || t == "bf16") return {DataType::bf16, 2};
    if (t == "double" || t == "float64") return {DataType::fp32, 8};
    if (t == "long" || t == "int64") return {DataType::int64, 8};
    if (t == "int" || t == "int32") return {DataType::int32, 4};
    if (t == "byte" || t == "char" || t == "int8" || t == "uint8" || t == "bool") return {DataType::int8, 1};
    return {DataType::fp32, 4};
}

std::vector<std::uint32_t> parse_rank_list(const std::string& text) {
    std::vector<std::uint32_t> ranks;
    std::uint32_t value = 0;
    bool in_number = false;
    for (const char c : text) {
        if (c >= '0' && c <= '9') {
            const std::uint64_t next = std::uint64_t{value} * 10 + static_cast<std::uint32_t>(c - '0');
            value = next > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(next);
            in_number = true;
        } else if (in_number) {
            ranks.push_back(value);
            value = 0;
            in_number = false;
        }
    }
    if (in_number) ranks.push_back(value);
    return ranks;
}

/// The collective a CPU op or a kernel's "Collective name" stands for: nccl:all_reduce, nccl:_all_gather_base,
/// nccl:_reduce_scatter_base, nccl:all_to_all, allgather, reduce_scatter_tensor, ... (nullopt: not one).
std::optional<CollectiveKind> collective_named(std::string_view name) {
    if (name.rfind("nccl:", 0) == 0) name.remove_prefix(5);
    std::string n;
    for (const char c : name)
        if (c != '_') n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (n.find("alltoall") != std::string::npos) return CollectiveKind::all_to_all;
    if (n.find("allreduce") != std::string::npos) return CollectiveKind::all_reduce;
    if (n.find("reducescatter") != std::string::npos) return CollectiveKind::reduce_scatter;
    if (n.find("allgather") != std::string::npos) return CollectiveKind::all_gather;
    if (n.find("broadcast") != std::string::npos) return CollectiveKind::broadcast;
    if (n == "reduce") return CollectiveKind::reduce;
    if (n == "barrier") return CollectiveKind::barrier;
    return std::nullopt;
}

/// Whether a kernel that is not NCCL's (name, and `n` lowercased) moves data between GPUs: DeepEP's
/// dispatch/combine/notify kernels, NVSHMEM kernels, kernels named as all-to-all, or a name containing one of the
/// user's patterns (`--comm-kernel`).
bool other_comm_kernel(const std::string& name, const std::string& n, const KinetoOptions& options) {
    if (name.rfind("nccl", 0) == 0) return false;
    for (const auto& pattern : options.comm_kernels)
        if (!pattern.empty() && name.find(pattern) != std::string::npos) return true;
    static const char* const builtin[] = {"deep_ep", "deepep", "nvshmem", "all_to_all", "alltoall"};
    for (const char* b : builtin)
        if (n.find(b) != std::string::npos) return true;
    return false;
}

}  // namespace clustersim::traces::kineto
