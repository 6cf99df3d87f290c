// `clustersim convert IN... --to native -o OUT`: import traces and write the OpGraph in the native format.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "engine/error.h"
#include "tools/cli/commands.h"
#include "traces/formats/kineto_reader.h"
#include "traces/native_trace.h"
#include "traces/text_file.h"

namespace clustersim::cli {

namespace {
struct ConvertOptions {
    std::vector<std::string> inputs;
    std::string to = "native";
    std::string format = "auto";
    std::string output;
    std::uint32_t world_size = 0;
    int iteration = -1;
    bool drop_gaps = false;
};

void convert(const ConvertOptions& o) {
    std::string format = o.format;
    if (format == "auto")
        format =
            traces::looks_like_kineto(traces::read_text_file(o.inputs.front()).substr(0, 4096)) ? "kineto" : "native";
    traces::OpGraph graph;
    if (format == "kineto") {
        traces::KinetoOptions k;
        if (o.iteration >= 0) k.iteration = o.iteration;
        k.keep_gaps = !o.drop_gaps;
        k.world_size = o.world_size;
        graph = traces::read_kineto(o.inputs, k);
    } else {
        if (o.inputs.size() != 1) throw engine::InputError("a native trace is one file holding every rank");
        graph = traces::read_native_trace(o.inputs.front());
    }
    traces::write_native_trace(graph, o.output);
    std::fprintf(stderr, "wrote %s: %u ranks, %zu ops, %zu streams, %zu communicators\n", o.output.c_str(),
                 graph.rank_count, graph.ops.size(), graph.streams.size(), graph.comms.size());
}
}  // namespace

void add_convert_command(CLI::App& app) {
    auto o = std::make_shared<ConvertOptions>();
    auto* cmd =
        app.add_subcommand("convert",
                           "Import traces and write them in clustersim's native JSON format (docs/formats.md).\n"
                           "Example: clustersim convert worker*.pt.trace.json.gz --to native -o dlrm.json");
    cmd->add_option("inputs", o->inputs, "Input trace files (Kineto JSON per rank, .gz ok; or a native trace)")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option("--to", o->to, "Output format")->capture_default_str()->check(CLI::IsMember({"native"}));
    cmd->add_option("--format", o->format, "Input format")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "native", "kineto"}));
    cmd->add_option("-o,--output", o->output, "Output file")->required();
    cmd->add_option("--world-size", o->world_size, "Ranks of the job (Kineto; default: distributedInfo)");
    cmd->add_option("--iteration", o->iteration, "ProfilerStep#N to import (Kineto; default: the first)");
    cmd->add_flag("--drop-gaps", o->drop_gaps, "Drop host gaps between kernels (Kineto)");
    cmd->callback([o] { convert(*o); });
}

}  // namespace clustersim::cli
