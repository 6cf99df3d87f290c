// The MPI driver of `clustersim sweep --mpi` (see sweep_mpi.cpp).
#pragma once

#include <optional>

#include "sim/sweep/sweep_runner.h"

namespace clustersim::cli {

/// Runs the sweep across the ranks of mpirun; returns the outcome on rank 0, nothing on the workers.
std::optional<sim::SweepOutcome> run_sweep_mpi(const sim::SweepSpec& spec, sim::SweepOptions options);

}  // namespace clustersim::cli
