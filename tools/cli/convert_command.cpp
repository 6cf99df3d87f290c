// `clustersim convert IN... --to native -o OUT`: import traces and write the OpGraph in the native format.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "engine/error.h"
#include "tools/cli/commands.h"
#include "traces/formats/trace_import.h"
#include "traces/native_trace.h"

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
    std::string fill = "spmd";
    std::uint32_t replicas = 0;
    std::string schedule = "1f1b";
    std::uint32_t pipeline_chunks = 0;
};

void convert(const ConvertOptions& o) {
    traces::ImportOptions import;
    import.format = o.format;
    import.world_size = o.world_size;
    if (o.iteration >= 0) import.iteration = o.iteration;
    import.keep_gaps = !o.drop_gaps;
    import.fold = o.fill == "fold";
    import.replicas = o.replicas;
    import.schedule = *traces::parse_pipeline_schedule(o.schedule);
    import.pipeline_chunks = o.pipeline_chunks;
    const traces::OpGraph graph = traces::import_traces(o.inputs, import);
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
    cmd->add_option("--format", o->format, "Input format")
        ->capture_default_str()
        ->check(CLI::IsMember(traces::trace_format_names()));
    cmd->add_option("-o,--output", o->output, "Output file")->required();
    cmd->add_option("--world-size", o->world_size, "Ranks of the job (Kineto; default: distributedInfo)");
    cmd->add_option("--pipeline-schedule", o->schedule,
                    "Text workloads: pipeline schedule, 1f1b (Megatron's; interleaved over the header's vpp model "
                    "chunks) or gpipe")
        ->capture_default_str()
        ->check(CLI::IsMember({"1f1b", "gpipe"}));
    cmd->add_option("--pipeline-chunks", o->pipeline_chunks,
                    "Text workloads: model chunks per pipeline stage (interleaving; default: the header's vpp)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--replicas", o->replicas,
                    "Text workloads: data-parallel replicas to keep; the others are folded by symmetry (default: all, "
                    "or 1 when the job exceeds 20 M ops)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--iteration", o->iteration, "ProfilerStep#N to import (Kineto; default: the first)");
    cmd->add_option("--fill", o->fill,
                    "Kineto with --world-size above the files' ranks: spmd (missing ranks replay the first file's "
                    "ops) or fold (only the given ranks are simulated; groups reaching the others are folded)")
        ->capture_default_str()
        ->check(CLI::IsMember({"spmd", "fold"}));
    cmd->add_flag("--drop-gaps", o->drop_gaps, "Drop host gaps between kernels (Kineto)");
    cmd->callback([o] { convert(*o); });
}

}  // namespace clustersim::cli
