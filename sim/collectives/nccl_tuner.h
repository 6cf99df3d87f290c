// NCCL's own cost model (src/graph/tuning.cc, as summarized in ../shared/reference/nccl-cost-model.md): the
// time NCCL predicts for each (algorithm, protocol) pair, and its choice, the argmin. clustersim uses the choice
// to pick what to simulate, and the protocol's latencies and wire efficiency in the simulation; the simulated
// time then adds what NCCL's model cannot see: contention and arrival skew.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "traces/op_graph.h"

namespace clustersim::sim {

enum class NcclAlgorithm : std::uint8_t { tree, ring, nvls };
enum class NcclProtocol : std::uint8_t { ll, ll128, simple };
enum class GpuArch : std::uint8_t { volta, ampere, hopper };

const char* nccl_algorithm_name(NcclAlgorithm a);
const char* nccl_protocol_name(NcclProtocol p);
std::optional<NcclProtocol> parse_nccl_protocol(std::string_view name);

/// What NCCL's tuner knows about a communicator, derived from the topology.
struct NcclTopologyInfo {
    GpuArch arch = GpuArch::hopper;
    std::uint32_t ranks = 1;
    std::uint32_t nodes = 1;
    bool nvlink = true;  // GPUs of a node joined by NVLink (else PCIe)
    std::uint32_t channels = 16;
    double intra_bw_gbps = 0;  // bus bandwidth inside a node, all channels (GB/s)
    double inter_bw_gbps = 0;  // bus bandwidth per GPU across nodes, all channels (GB/s)
    bool nvls = false;         // one node whose NVSwitch can reduce (Hopper and later)
};

struct NcclEstimate {
    NcclAlgorithm algorithm = NcclAlgorithm::ring;
    NcclProtocol protocol = NcclProtocol::simple;
    double time_us = 0;
    double latency_us = 0;
    double bus_bw_gbps = 0;
};

/// The size NCCL's model takes for a call with a per-rank buffer of `bytes`: clustersim's all-gather size is each
/// rank's contribution, NCCL's its whole output (x ranks); the other kinds agree.
std::uint64_t nccl_bytes(traces::CollectiveKind kind, std::uint64_t bytes, std::uint32_t ranks);

/// NCCL's predicted time for one pair; nullopt when NCCL has no such pair for the collective (tree is for
/// all-reduce only).
std::optional<NcclEstimate> nccl_estimate(traces::CollectiveKind kind, std::uint64_t bytes, NcclAlgorithm algorithm,
                                          NcclProtocol protocol, const NcclTopologyInfo& info);

/// NCCL's choice: the fastest enabled pair, optionally with the algorithm or the protocol fixed.
NcclEstimate nccl_choose(traces::CollectiveKind kind, std::uint64_t bytes, const NcclTopologyInfo& info,
                         std::optional<NcclAlgorithm> algorithm = std::nullopt,
                         std::optional<NcclProtocol> protocol = std::nullopt);

/// Per-step hardware latency (us) of a hop of one kind for an (algorithm, protocol): hwLatencies.
double nccl_hop_latency_us(bool network, bool nvlink, NcclAlgorithm algorithm, NcclProtocol protocol);
/// Base latency (us) of a call: baseLatencies.
double nccl_base_latency_us(NcclAlgorithm algorithm, NcclProtocol protocol);
/// Bytes on the wire per payload byte: LL sends 8-byte lines of 4 data bytes and a flag; LL128 128-byte lines
/// with 120 data bytes; Simple sends the data as is.
double nccl_wire_factor(NcclProtocol protocol);
/// Fraction of NVLink bandwidth NVLS reaches (nvlsEfficiency, Hopper).
double nccl_nvls_efficiency();
/// Payload bytes one channel moves per pipeline step of a protocol: the protocol's buffer over NCCL_STEPS (8)
/// slots. Simple: the 4 MiB default NCCL_BUFFSIZE, 512 KiB a step; LL: 8 lines per thread x 512 threads x 16-byte
/// lines a step, half of it data (32 KiB); LL128: 120 8-byte elements per thread x 640 threads a step, 120 of
/// every 128 bytes data (576,000 bytes). NCCL's device.h and transport defaults.
std::uint64_t nccl_step_bytes(NcclProtocol protocol);

}  // namespace clustersim::sim
