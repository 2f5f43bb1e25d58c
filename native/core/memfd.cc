// memfd.cc — see memfd.h.
#include "memfd.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

namespace exactspawn {

namespace {

// Writes every byte at its offset (pwrite leaves the file offset at 0, which
// the child shares through the dup2'd descriptor and reads from).
int write_all(int fd, const char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) return -EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace

int sealed_memfd(const char* name, const char* data, std::size_t size, StepFailure* failure) {
  int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    *failure = {-errno, "memfd_create", "memfd"};
    return failure->err;
  }
  int err = write_all(fd, data, size);
  if (err != 0) {
    *failure = {err, "pwrite", "memfd"};
  } else if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0) {
    err = -errno;
    *failure = {err, "fcntl", "memfd"};
  }
  if (err != 0) {
    close(fd);
    return err;
  }
  return fd;
}

}  // namespace exactspawn
