// Format detection and dispatch.
#include "traces/formats/trace_import.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/error.h"
#include "traces/formats/chakra_reader.h"
#include "traces/formats/kineto_reader.h"
#include "traces/formats/text_workload_reader.h"
#include "traces/native_trace.h"
#include "traces/text_file.h"

namespace clustersim::traces {

const std::vector<std::string>& trace_format_names() {
    static const std::vector<std::string> names = {"auto", "astra-text", "chakra", "kineto", "native", "simai"};
    return names;
}

std::string detect_trace_format(const std::string& path) {
    const std::string head = read_text_prefix(path, 4096);
    if (head.find("clustersim-trace") != std::string::npos) return "native";
    if (looks_like_kineto(head)) return "kineto";
    // JSON forms clustersim does not read: say what they are and what to give instead.
    const auto first = head.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && head[first] == '{') {
        if (head.find("\"workload_graph\"") != std::string::npos)
            throw engine::InputError(engine::SourceLocation{path},
                                     "this is a Chakra trace in JSON form (workload_graph): clustersim reads Chakra's "
                                     "protobuf .et files; give the .et files it was made from");
        if (head.find("\"schema\"") != std::string::npos && head.find("\"nodes\"") != std::string::npos)
            throw engine::InputError(engine::SourceLocation{path},
                                     "this is a PyTorch execution trace (JSON with schema and nodes): convert it to "
                                     "Chakra .et files with Chakra's converter, or replay the rank's Kineto trace");
    }
    if (looks_like_chakra(head)) return "chakra";
    if (looks_like_simai_workload(head)) return "simai";
    if (looks_like_text_workload(head)) return "astra-text";
    // Binary content that is no Chakra file (/dev/zero, an image, a core dump): refused from its first bytes,
    // before reading it whole.
    const auto binary = std::find_if(head.begin(), head.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 && u != '\t' && u != '\n' && u != '\r';
    });
    if (binary != head.end())
        throw engine::InputError(
            engine::SourceLocation{path},
            fmt::format("byte {}: binary content (0x{:02x}) that is no Chakra .et file: expected a native or Kineto "
                        "JSON trace, Chakra .et files, or a SimAI / ASTRA-sim text workload",
                        binary - head.begin(), static_cast<unsigned char>(*binary)));
    return "native";
}

KinetoOptions kineto_options(const ImportOptions& options) {
    KinetoOptions k;
    k.iteration = options.iteration;
    k.keep_gaps = options.keep_gaps;
    k.world_size = options.world_size;
    k.fold = options.fold;
    k.comm_kernels = options.comm_kernels;
    k.align = options.align == "clock"  ? KinetoAlign::clock
              : options.align == "step" ? KinetoAlign::step
              : options.align == "none" ? KinetoAlign::none
                                        : KinetoAlign::automatic;
    return k;
}

OpGraph import_traces(const std::vector<std::string>& files, const ImportOptions& options) {
    if (files.empty()) throw engine::InputError("no trace files given");
    const std::string format = options.format == "auto" ? detect_trace_format(files.front()) : options.format;
    if (format == "chakra") return read_chakra(files);
    if (format == "kineto") return read_kineto(files, kineto_options(options));
    if (files.size() != 1)
        throw engine::InputError(
            fmt::format("a {} trace is one file describing every rank, got {} files", format, files.size()));
    if (format == "simai" || format == "astra-text") {
        TextWorkloadOptions t;
        t.world_size = options.world_size;
        t.replicas = options.replicas;
        t.simai = format == "simai";
        t.schedule = options.schedule;
        t.chunks = options.pipeline_chunks;
        return read_text_workload(files.front(), t);
    }
    if (format == "native") return read_native_trace(files.front());
    throw engine::InputError(fmt::format("unknown trace format '{}'", format));
}

}  // namespace clustersim::traces
