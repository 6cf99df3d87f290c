// What the names in a Kineto trace mean: a kernel's class and NCCL collective kind from its name, data types and
// rank lists from the profiler's args, collectives named by CPU ops, and communication kernels that are not NCCL's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/formats/kineto_reader.h"
#include "traces/op_graph.h"

namespace clustersim::traces::kineto {

std::string lowercase(const std::string& name);
/// The kernel class from a kernel's lowercased name.
KernelClass classify(const std::string& n);
/// The collective of an NCCL kernel from its name (ncclKernel_AllReduce_RING_LL_Sum_float,
/// ncclDevKernel_AllGather_RING_LL; SendRecv kernels as all-to-all); nullopt for other kernels.
std::optional<CollectiveKind> nccl_kind(const std::string& name);
/// A tensor's dtype as the profiler names it (float, half, bfloat16, int64, ..., any case) and its element size;
/// fp32 of 4 bytes when unknown.
std::pair<DataType, int> dtype_of(const std::string& text);
/// The numbers in a process group's rank list as the profiler prints it ("[0, 1, 2]"); a number past 2^32
/// saturates (and is then no rank of the job).
std::vector<std::uint32_t> parse_rank_list(const std::string& text);
/// The collective a CPU op or a kernel's "Collective name" stands for: nccl:all_reduce, nccl:_all_gather_base,
/// nccl:_reduce_scatter_base, nccl:all_to_all, allgather, reduce_scatter_tensor, ... (nullopt: not one).
std::optional<CollectiveKind> collective_named(std::string_view name);
/// Whether a kernel that is not NCCL's (name, and `n` lowercased) moves data between GPUs: DeepEP's
/// dispatch/combine/notify kernels, NVSHMEM kernels, kernels named as all-to-all, or a name containing one of the
/// user's patterns (`--comm-kernel`).
bool other_comm_kernel(const std::string& name, const std::string& n, const KinetoOptions& options);

}  // namespace clustersim::traces::kineto
