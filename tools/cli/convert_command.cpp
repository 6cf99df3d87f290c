// `clustersim convert IN... --to native -o OUT`: import traces and write the OpGraph in the native format.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "engine/error.h"
#include "tools/cli/commands.h"
#include "tools/cli/import_options.h"
#include "traces/formats/trace_import.h"
#include "traces/native_trace.h"

namespace clustersim::cli {

namespace {
struct ConvertOptions {
    std::vector<std::string> inputs;
    std::string to = "native";
    std::string output;
    ImportCliOptions import;
};

void convert(const ConvertOptions& o) {
    const traces::OpGraph graph = traces::import_traces(o.inputs, o.import.import_options());
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
    cmd->add_option("inputs", o->inputs,
                    "Input files: Kineto JSON per rank (.gz ok), a SimAI/ASTRA-sim text workload, or a native trace")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option("--to", o->to, "Output format")->capture_default_str()->check(CLI::IsMember({"native"}));
    cmd->add_option("-o,--output", o->output, "Output file")->required();
    add_import_options(*cmd, o->import);
    cmd->callback([o] { convert(*o); });
}

}  // namespace clustersim::cli
