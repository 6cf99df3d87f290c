// Registration of the clustersim subcommands. Each lives in its own *_command.cpp and adds itself to the app;
// its options bind into a struct and its action calls one library function.
#pragma once

namespace CLI {
class App;
}

namespace clustersim::cli {

/// Exit codes, documented in --help.
enum ExitCode : int { exit_ok = 0, exit_partial = 1, exit_usage = 2, exit_input = 3, exit_internal = 4 };
/// Thrown by a command whose run finished but not wholly (a sweep with failed points): exit 1.
struct PartialFailure {};

void add_bench_command(CLI::App& app);
void add_topo_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_replay_command(CLI::App& app);
void add_collective_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_analyze_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_models_command(CLI::App& app);

/// `--no-classes` (collective, replay, run): what it does, in one place.
inline constexpr const char* no_classes_help =
    "Solve every flow alone, without classes of identical flows (one rate and one completion for the transfers of a "
    "ring step): the reference the classes are checked against, slower";

}  // namespace clustersim::cli
