// kernel_support.h — whether the running kernel has the system calls the
// addon cannot do without: pidfd_open(2) (Linux 5.3; every exit watch) and
// close_range(2) (Linux 5.9; the child path). The library probes once at
// load and takes its fallback, saying why, when one is missing, instead of
// failing spawns one by one. Each probe is a harmless call: pidfd_open on our
// own pid (the fd is closed again), close_range with first > last, which a
// kernel that has it refuses with EINVAL before closing anything.
#pragma once

namespace exactspawn {

struct KernelSupport {
  int pidfd_open_error = 0;   // 0, or the errno that says the call is not usable
  int close_range_error = 0;  // (ENOSYS: too old a kernel; EPERM: a seccomp profile)
};

KernelSupport probe_kernel_support();

}  // namespace exactspawn
