// helper_file.h — the exec helper's file (native/helper/main.cc, shipped
// beside the addon): where it is, opened once for the process, checked that
// it can run here, and why not where it cannot. child_path.cc execs it.
#pragma once

#include <string>

#include "step_failure.h"

namespace exactspawn {

constexpr int kAtEmptyPath = 0x1000;  // AT_EMPTY_PATH

// Where the exec helper is. At its first use (a spawn that needs it, or
// helper_run()) it is opened once (O_RDONLY | O_CLOEXEC) and checked
// (faccessat2 X_OK: its mode and its mount's noexec); where the file cannot be
// exec'd, a sealed in-memory copy is made (memfd_create MFD_EXEC, the file's
// bytes, F_SEAL_*) and exec'd instead; where that is refused too, the failure
// (step "helper", the call named) is kept and reported by every spawn that
// needs the helper. A file built for another machine than this process's
// (its ELF e_machine) is refused with ENOEXEC. Returns 0. Called again with
// the same path (each worker's loader does), it keeps what is open; with
// another (tests), the next helper is opened onto the same descriptor number
// (a spawn on another thread may hold it): one descriptor per process.
int set_helper_path(const char* path, StepFailure* failure);

// How the helper runs (opening it now if not yet): "file" (its own file),
// "memory" (an in-memory copy), "unavailable" (*failure says why), or nullptr
// when no path was set. *path is the path set (empty when none); *reason
// (when given) says why it cannot run where the errno does not (another
// machine's build, or the build's note of why it left the helper out), else "".
const char* helper_run(const char** path, StepFailure* failure, const char** reason = nullptr);

// The helper's descriptor (close-on-exec, for execveat(AT_EMPTY_PATH)), a
// copy of its path and whether the descriptor is that file (false: an
// in-memory copy, which the path does not name), or -errno with *failure
// saying why it cannot run.
int helper_fd(StepFailure* failure, std::string* path, bool* from_file);

}  // namespace exactspawn
