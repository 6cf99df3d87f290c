// Message compression shared by the generators (see compression.h).
#include "workloads/compression.h"

#include <fmt/format.h>

namespace clustersim::workloads {

double Compression::sent_bytes(double bytes, double width) const {
    switch (codec) {
        case Codec::none:
            return bytes;
        case Codec::topk:
            return bytes * ratio * (width + 4) / width;
        case Codec::quantize:
        case Codec::lowrank:
            return bytes * ratio;
    }
    return bytes;
}

Compression read_compression(const engine::Params& params, const std::string& codec_key, const std::string& ratio_key) {
    Compression c;
    c.codec = engine::choose(params, codec_key, codec_names, codec_key.c_str());
    c.ratio = params.number(ratio_key);
    if (!(c.ratio > 0) || c.ratio > 1)
        params.fail(ratio_key, fmt::format("expected a fraction above 0 and up to 1, got {}", c.ratio));
    return c;
}

StageCompression read_stage_compression(const engine::Params& params, std::uint32_t pp) {
    StageCompression c;
    c.codec = read_compression(params, "pp_compression", "pp_compression_ratio");
    c.codec.error_feedback = params.boolean("pp_error_feedback");
    const std::string& which = params.string("pp_compress");
    if (which != "gradients" && which != "activations" && which != "both")
        params.fail("pp_compress", fmt::format("unknown direction '{}' (known: gradients, activations, both)", which));
    c.activations = which != "gradients";
    c.gradients = which != "activations";
    if (c.codec.on() && pp < 2)
        params.fail("pp_compression", "compresses the messages between pipeline stages, but pp = 1 has none");
    return c;
}

void add_stage_compression_params(std::vector<engine::ParamSpec>& specs) {
    using engine::ParamType;
    specs.push_back({"pp_compression", ParamType::string, "none",
                     "compression of the messages between pipeline stages (Optimus-CC-like): none, topk (values and "
                     "4-byte indices), quantize or lowrank; encoded and decoded by memory-bound kernels on the stages' "
                     "compute streams"});
    specs.push_back({"pp_compression_ratio", ParamType::number, "0.1",
                     "kept fraction of the elements (topk) or of the bytes (quantize, lowrank)"});
    specs.push_back({"pp_compress", ParamType::string, "gradients",
                     "which messages: gradients (the backward's activation gradients, as Optimus-CC), activations "
                     "(the forward's) or both"});
    specs.push_back({"pp_error_feedback", ParamType::boolean, "true",
                     "keep the compression residual of each message and fold it into the next (reads and writes)"});
}

Compression read_gradient_compression(const engine::Params& params) {
    Compression c = read_compression(params, "dp_compression", "dp_compression_ratio");
    c.error_feedback = params.boolean("dp_error_feedback");
    return c;
}

void add_gradient_compression_params(std::vector<engine::ParamSpec>& specs) {
    using engine::ParamType;
    specs.push_back({"dp_compression", ParamType::string, "none",
                     "compression of the data-parallel gradient buckets (zero_stage 0): none, topk or quantize "
                     "(all-gathered), lowrank (all-reduced factors); encoded as a bucket closes, decoded after the "
                     "backward"});
    specs.push_back({"dp_compression_ratio", ParamType::number, "0.01",
                     "kept fraction of the elements (topk) or of the bytes (quantize, lowrank)"});
    specs.push_back({"dp_error_feedback", ParamType::boolean, "true",
                     "keep each gradient's compression residual (memory, and two more passes in the encoder)"});
}

}  // namespace clustersim::workloads
