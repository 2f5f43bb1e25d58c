// pipe.cc — see pipe.h.
#include "pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace exactspawn {

int make_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC) < 0 ? -errno : 0; }

int close_fd(int fd) { return close(fd) < 0 && errno != EINTR ? -errno : 0; }

long read_fd(int fd, char* buffer, unsigned long size) {
  ssize_t n;
  do {
    n = read(fd, buffer, size);
  } while (n < 0 && errno == EINTR);
  return n < 0 ? -errno : static_cast<long>(n);
}

}  // namespace exactspawn
