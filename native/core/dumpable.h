// dumpable.h — the calling process's "dumpable" attribute (prctl(2)
// PR_SET_DUMPABLE / PR_GET_DUMPABLE). A process that is not dumpable has its
// /proc/<pid> entries owned by root and refuses ptrace-mode access (environ,
// mem, pidfd_getfd, process_vm_readv) to processes of its own uid that lack
// CAP_SYS_PTRACE; it writes no core dump. The attribute belongs to the whole
// process (its mm) and is reset by execve(2), so children that exec are not
// affected. Whether the host sets it is decided in TypeScript
// (src/host-dumpable.ts); this only makes the call. See proc(5)
// /proc/pid/environ, ptrace(2) "Ptrace access mode checking".
#pragma once

namespace exactspawn {

// PR_SET_DUMPABLE to 1 or 0: 0 or -errno.
int set_dumpable(bool dumpable);

// PR_GET_DUMPABLE: 0 (no), 1 (yes), 2 (root only), or -errno.
int dumpable_state();

}  // namespace exactspawn
