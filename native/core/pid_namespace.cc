// pid_namespace.cc — see pid_namespace.h.
#include "pid_namespace.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "capabilities.h"
#include "child_exit.h"
#include "child_steps.h"
#include "helper_plan.h"

namespace exactspawn {

int probe_pid_namespace(PidNamespace* how, StepFailure* failure) {
  *how = holds_capability(kCapSysAdmin) ? PidNamespace::kPid : PidNamespace::kPidAndUser;
  const int status =
      run_helper_probe(static_cast<int>(PlanMode::kProbePidNamespace), failure, *how);
  if (status < 0) return status;
  if (status != 0) {
    *failure = {-EPERM, "write", "contain", "/proc/self/uid_map"};
    return failure->err;
  }
  return 0;
}

}  // namespace exactspawn

namespace exactspawn {

namespace {

// Reads up to size - 1 bytes of `path`, NUL-terminated; bytes read or -errno.
long read_small_file(const char* path, char* buffer, size_t size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  long n;
  do {
    n = read(fd, buffer, size - 1);
  } while (n < 0 && errno == EINTR);
  const int error = errno;
  close(fd);
  if (n < 0) return -error;
  buffer[n] = '\0';
  return n;
}

}  // namespace

int receive_leader_pidfd(int status_fd) {
  struct pollfd ready = {status_fd, POLLIN, 0};
  while (poll(&ready, 1, -1) < 0) {
    if (errno != EINTR) return -1;
  }
  // A look without a control buffer installs no descriptor.
  char record[sizeof kLeaderRecord + 1];
  long n;
  do {
    n = recv(status_fd, record, sizeof record, MSG_PEEK);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<long>(sizeof kLeaderRecord) ||
      std::memcmp(record, kLeaderRecord, sizeof kLeaderRecord) != 0) {
    return -1;
  }
  struct iovec part = {record, sizeof record};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  struct msghdr message = {};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  do {
    n = recvmsg(status_fd, &message, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return -1;
  for (struct cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
       header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS &&
        header->cmsg_len == CMSG_LEN(sizeof(int))) {
      int pidfd;
      std::memcpy(&pidfd, CMSG_DATA(header), sizeof pidfd);
      return pidfd;
    }
  }
  return -1;
}

int leader_exit_status(int pidfd, int* wait_status) {
  char path[64];
  char text[4096];
  std::snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
  if (long n = read_small_file(path, text, sizeof text); n < 0) return static_cast<int>(n);
  const char* pid_line = std::strstr(text, "\nPid:");
  if (pid_line == nullptr) return -ENOENT;
  const long pid = std::strtol(pid_line + 5, nullptr, 10);
  if (pid <= 0) return -ESRCH;  // -1: reaped; 0: in a namespace this host cannot see
  std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  if (long n = read_small_file(path, text, sizeof text); n < 0) return n == -ENOENT ? -ESRCH : n;
  // The fields after the command's last ')': state is field 3, exit_code 52.
  const char* at = std::strrchr(text, ')');
  if (at == nullptr) return -EIO;
  ++at;
  const char* fields[50] = {};
  int count = 0;
  for (char* cursor = const_cast<char*>(at); count < 50;) {
    while (*cursor == ' ') ++cursor;
    if (*cursor == '\0' || *cursor == '\n') break;
    fields[count++] = cursor;
    while (*cursor != ' ' && *cursor != '\0' && *cursor != '\n') ++cursor;
  }
  if (count < 50) return -EIO;  // a kernel before 3.5 has no exit_code
  if (fields[0][0] != 'Z' && fields[0][0] != 'X') return -EAGAIN;
  const int status = static_cast<int>(std::strtol(fields[49], nullptr, 10));
  // Still unreaped now: the pid read above was the leader's all along.
  if (signal_pidfd(pidfd, 0) != 0) return -ESRCH;
  *wait_status = status;
  return 0;
}

}  // namespace exactspawn
