// Message compression shared by the generators (private to workloads/): a codec, its ratio, and what encoding
// and decoding a message cost. Used for data-parallel gradient buckets and gossip messages (layers generator) and
// for the activations and activation gradients passed between pipeline stages (pipeline and transformer
// generators, as Optimus-CC compresses them).
//
// Message sizes: top-k sends a value and a 4-byte index per kept element (ratio = kept elements / elements);
// quantization and low-rank factors send `ratio` of the bytes. Encode and decode are memory-bound kernels on the
// GPU: encode reads the tensor (and, with error feedback, the residual), writes the message (and the new
// residual); decode reads what arrived and writes the tensor. Low-rank's small GEMMs (PowerSGD's two products of
// the tensor with rank-r factors) are counted as memory traffic too: at the ratios used (r << h) they stream
// the tensor, not compute on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/enum_names.h"
#include "engine/params.h"
#include "traces/op_graph.h"

namespace clustersim::workloads {

enum class Codec : std::uint8_t { none, topk, quantize, lowrank };
inline constexpr engine::NameTable<Codec, 4> codec_names{
    {{Codec::none, "none"}, {Codec::topk, "topk"}, {Codec::quantize, "quantize"}, {Codec::lowrank, "lowrank"}}};

struct Compression {
    Codec codec = Codec::none;
    double ratio = 1;  // see above
    bool error_feedback = false;
    [[nodiscard]] bool on() const { return codec != Codec::none; }
    /// The bytes a message of `bytes` (elements of `width` bytes) carries compressed.
    [[nodiscard]] double sent_bytes(double bytes, double width) const;
    /// Memory traffic of encoding a tensor of `bytes` into a message of `sent` bytes.
    [[nodiscard]] double encode_traffic(double bytes, double sent) const {
        return bytes + sent + (error_feedback ? 2 * bytes : 0);
    }
    /// Memory traffic of decoding `received` bytes of messages into a tensor of `bytes`.
    [[nodiscard]] static double decode_traffic(double received, double bytes) { return received + bytes; }
};

/// A compressed exchange's decode kernel, queued after the backward's kernels (as a DDP communication hook's
/// callback runs once its exchange completes), not when the bucket closes.
struct DeferredDecode {
    std::string name;
    double traffic = 0;  // Compression::decode_traffic
    traces::OpId after;  // the exchange
};

/// Reads a codec key and its ratio key (a fraction above 0 and up to 1); located errors name the key.
Compression read_compression(const engine::Params& params, const std::string& codec_key, const std::string& ratio_key);

/// Compression of the messages between pipeline stages (pipeline and transformer generators): which directions.
struct StageCompression {
    Compression codec;
    bool activations = false;  // forward: a stage's output activations
    bool gradients = false;    // backward: the gradients of a stage's input activations
    [[nodiscard]] bool on(bool backward) const { return codec.on() && (backward ? gradients : activations); }
};

/// Reads pp_compression, pp_compression_ratio, pp_compress (gradients, activations or both) and
/// pp_error_feedback; compression with a single stage (pp = 1) is a located error.
StageCompression read_stage_compression(const engine::Params& params, std::uint32_t pp);
/// Their specs, for the generators' parameter tables.
void add_stage_compression_params(std::vector<engine::ParamSpec>& specs);
/// The transformer generator's data-parallel gradient compression: dp_compression, dp_compression_ratio and
/// dp_error_feedback (read with read_compression), and their specs.
Compression read_gradient_compression(const engine::Params& params);
void add_gradient_compression_params(std::vector<engine::ParamSpec>& specs);

}  // namespace clustersim::workloads
