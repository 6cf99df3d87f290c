// The clustersim command line: global options, subcommands, and the one place that turns errors into exit codes.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "engine/error.h"
#include "engine/interrupt.h"
#include "engine/log.h"
#include "engine/memory_budget.h"
#include "engine/units.h"
#include "tools/cli/commands.h"

namespace {
constexpr const char* exit_codes_help =
    "Exit codes: 0 success; 1 a sweep finished with failed points (or a merge with missing ones); 2 usage error "
    "(bad option); 3 input error (a file, value or trace is wrong; the "
    "message names file:line:column and key); 4 internal error (a bug in clustersim: please report it); 130 or 143 "
    "interrupted (SIGINT, SIGTERM): outputs being written are removed, none is left half-written.";
}

/// An allocation past the budget (or a container size beyond what the machine can hold): the input asked for too
/// much, an input error naming what was being built.
int out_of_memory() {
    using namespace clustersim;
    const std::string scope = engine::memory_scope();
    std::fprintf(stderr,
                 "clustersim: error: %s%sran out of the memory budget of %s (--max-memory; default 80%% of the "
                 "machine's memory): fewer ranks (--replicas, a smaller world), a smaller input, or a larger "
                 "--max-memory\n",
                 scope.c_str(), scope.empty() ? "" : ": ",
                 engine::format_memory(static_cast<double>(engine::memory_budget())).c_str());
    return cli::exit_input;
}

int main(int argc, char** argv) {
    using namespace clustersim;
    engine::install_interrupt_handlers();  // Ctrl-C / SIGTERM: exit 130 / 143, no half-written output
    CLI::App app{"clustersim: a discrete-event simulator of distributed deep-learning training on GPU clusters.",
                 "clustersim"};
    app.footer(exit_codes_help);
    app.set_version_flag("--version", std::string("clustersim ") + CLUSTERSIM_VERSION);
    int quiet = 0, verbose = 0;
    app.add_flag("-q,--quiet", quiet, "Less logging on stderr (repeat: -qq errors only)");
    app.add_flag(
        "-v,--verbose", verbose,
        "More logging on stderr: each collective call (the first 1,000), the network's counts, each phase's wall "
        "time and peak memory (repeat: -vv every collective call and a per-event trace)");
    std::string max_memory;
    app.add_option("--max-memory", max_memory,
                   "Memory budget, e.g. 16GB: inputs, plans and the simulation's state beyond it are refused with an "
                   "estimate and the option that helps (default: 80% of the machine's memory, cgroup or ulimit)");
    app.require_subcommand(1);
    app.fallthrough();  // -q, -v and --version also after the subcommand
    app.parse_complete_callback([&] {
        const int level = std::clamp(2 - verbose + quiet, 0, 6);  // 2 = info; -v debug, -vv trace; -q warn
        engine::setup_logging(level);
        if (!max_memory.empty())
            engine::set_memory_budget(engine::parse_bytes(max_memory, engine::SourceLocation{"--max-memory"}));
        engine::apply_memory_limit();
    });
    cli::add_run_command(app);
    cli::add_replay_command(app);
    cli::add_collective_command(app);
    cli::add_compare_command(app);
    cli::add_analyze_command(app);
    cli::add_sweep_command(app);
    cli::add_convert_command(app);
    cli::add_topo_command(app);
    cli::add_models_command(app);
    cli::add_bench_command(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? cli::exit_ok : cli::exit_usage;
    } catch (const cli::PartialFailure&) {
        return cli::exit_partial;
    } catch (const engine::InputError& e) {
        std::fprintf(stderr, "clustersim: error: %s\n", e.what());
        return cli::exit_input;
    } catch (const std::bad_alloc&) {
        return out_of_memory();
    } catch (const std::length_error&) {
        return out_of_memory();
    } catch (const engine::InternalError& e) {
        std::fprintf(stderr, "clustersim: %s\n", e.what());
        return cli::exit_internal;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "clustersim: internal error: %s\n", e.what());
        return cli::exit_internal;
    }
    return cli::exit_ok;
}
