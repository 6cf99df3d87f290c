// Clean interrupts: SIGINT and SIGTERM stop the process at once with exit 130 or 143 after removing the
// temporaries of outputs being written (AtomicFile registers them), so an interrupted run leaves no half-written
// file. Outputs are written only after a run, so an interrupt during the simulation leaves none at all.
#pragma once

namespace clustersim::engine {

/// Installs the SIGINT and SIGTERM handlers (once, from main).
void install_interrupt_handlers();

/// Registers a temporary file to remove on an interrupt; returns a slot for release_temporary, or -1 when every
/// slot is taken (the file is then not removed on an interrupt).
int register_temporary(const char* path);
void release_temporary(int slot);

}  // namespace clustersim::engine
