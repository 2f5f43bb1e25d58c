// pipe.cc — see pipe.h.
#include "pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace exactspawn {

int make_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC) < 0 ? -errno : 0; }

int close_fd(int fd) { return close(fd) < 0 && errno != EINTR ? -errno : 0; }

}  // namespace exactspawn
