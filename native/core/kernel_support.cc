// kernel_support.cc — see kernel_support.h.
#include "kernel_support.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

namespace exactspawn {

KernelSupport probe_kernel_support() {
  KernelSupport support;
  long fd = syscall(SYS_pidfd_open, getpid(), 0);
  if (fd >= 0) {
    close(static_cast<int>(fd));
  } else if (errno != EMFILE && errno != ENFILE && errno != ENOMEM) {
    // Out of fds or memory says nothing about the call; anything else does.
    support.pidfd_open_error = errno;
  }
  if (syscall(SYS_close_range, 1U, 0U, 0U) == 0) {
    support.close_range_error = EIO;  // a kernel that accepts first > last is not one we know
  } else if (errno != EINVAL) {
    support.close_range_error = errno;
  }
  return support;
}

}  // namespace exactspawn
