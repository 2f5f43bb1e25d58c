// step_failure.h — how every native failure is described: -errno, the system
// call that failed (nullptr when none did: an allocation, a teardown) and the
// library step it belongs to (an option name such as "parentDeathSignal", or
// a phase such as "stdio", "exec", "watch", "wait", "cleanup"). Core code
// fills one; the binding turns it into a JavaScript error in one place
// (system_error.h), so two failures of the same call in different steps
// (prctl for parentDeathSignal, noNewPrivileges and the sandbox) stay apart.
// All strings are static, but `path`: the file a step failed on (a sandbox
// path, a /proc file), nullptr when the failure names none; it points into
// memory that outlives the report (the plan, the caller's arguments).
#pragma once

namespace exactspawn {

struct StepFailure {
  int err = 0;                    // negative errno
  const char* syscall = nullptr;  // nullptr: no system call failed
  const char* step = nullptr;
  const char* path = nullptr;  // nullptr: the step's usual path (file, cwd)
};

}  // namespace exactspawn
