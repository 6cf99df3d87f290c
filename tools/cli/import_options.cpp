#include "tools/cli/import_options.h"

#include <CLI/CLI.hpp>

namespace clustersim::cli {

traces::ImportOptions ImportCliOptions::import_options() const {
    traces::ImportOptions import;
    import.format = format;
    import.world_size = world_size;
    if (iteration >= 0) import.iteration = iteration;
    import.keep_gaps = !drop_gaps;
    import.fold = fill == "fold";
    import.align = align;
    import.comm_kernels = comm_kernels;
    import.replicas = replicas;
    import.schedule = *traces::parse_pipeline_schedule(schedule);
    import.pipeline_chunks = pipeline_chunks;
    return import;
}

void add_import_options(CLI::App& cmd, ImportCliOptions& o) {
    cmd.add_option("--format", o.format, "Trace format")
        ->capture_default_str()
        ->check(CLI::IsMember(traces::trace_format_names()));
    cmd.add_option("--world-size", o.world_size,
                   "Ranks of the job (default: the traces' distributedInfo, or a text workload's all_gpus)");
    cmd.add_option("--iteration", o.iteration, "Kineto: ProfilerStep#N to import (default: the first)");
    cmd.add_flag("--drop-gaps", o.drop_gaps,
                 "Kineto: drop the host's gaps between kernels (what if launches were free)");
    cmd.add_option("--fill", o.fill,
                   "Kineto with --world-size above the files' ranks: spmd (missing ranks replay the first file's "
                   "ops) or fold (only the given ranks are simulated; groups reaching the others are folded)")
        ->capture_default_str()
        ->check(CLI::IsMember({"spmd", "fold"}));
    cmd.add_option("--align", o.align,
                   "Kineto, several files: clock (keep their shared clock's offsets: the ranks' start skew), step "
                   "(each rank's ProfilerStep at 0), none (each file from its earliest event), or auto (clock when "
                   "the files' first events lie within a minute of each other, else step)")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "clock", "step", "none"}));
    cmd.add_option("--comm-kernel", o.comm_kernels,
                   "Kineto: a name fragment of communication kernels that are not NCCL's, replayed as all-to-alls on "
                   "the network (repeatable; DeepEP, NVSHMEM and *all_to_all*/*alltoall* kernels are recognised "
                   "already)");
    cmd.add_option("--replicas", o.replicas,
                   "Text workloads: data-parallel replicas to simulate; the others are folded by symmetry (default: "
                   "all, or 1 when the job exceeds 20 M ops)")
        ->check(CLI::PositiveNumber);
    cmd.add_option("--pipeline-schedule", o.schedule,
                   "Text workloads: pipeline schedule, 1f1b (Megatron's; interleaved over the header's vpp model "
                   "chunks) or gpipe")
        ->capture_default_str()
        ->check(CLI::IsMember({"1f1b", "gpipe"}));
    cmd.add_option("--pipeline-chunks", o.pipeline_chunks,
                   "Text workloads: model chunks per pipeline stage (interleaving; default: the header's vpp)")
        ->check(CLI::PositiveNumber);
}

}  // namespace clustersim::cli
