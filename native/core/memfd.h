// memfd.h — an anonymous, sealed, close-on-exec file holding given bytes: the
// way a bash step's spilled values and large script reach the child without
// any path another user could reach (see docs/spill.md).
//
// Plain C++; returns an fd or a negative errno. See memfd_create(2), fcntl(2)
// (F_ADD_SEALS).
#pragma once

#include <cstddef>

#include "step_failure.h"

namespace exactspawn {

// Creates a memfd named `name` (shown only in /proc/<pid>/fd links), writes
// all `size` bytes of `data`, rewinds it to offset 0 and seals it against
// writing, growing, shrinking and further sealing. The fd is close-on-exec:
// only a spawn that dup2s it onto a slot passes it on. On failure nothing
// stays open and *failure names the call (memfd_create, pwrite, fcntl).
int sealed_memfd(const char* name, const char* data, std::size_t size, StepFailure* failure);

}  // namespace exactspawn
