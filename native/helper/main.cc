// main.cc — exactspawn-helper, the exec helper of children that change
// credentials or are sandboxed (core/child_path.h). A small static
// program (one binary serves glibc and musl hosts of an architecture): the
// host's vfork child has reset the signal dispositions, made the session or
// process group and set up stdio, then exec'ed this with
//   exactspawn-helper PLAN_FD STATUS_FD
// (every signal still blocked, an empty environment). In its own memory it
// reads the plan (core/helper_plan.h), runs the target steps in their one
// order (core/child_steps.h) and execs the target. A failed step goes to the
// close-on-exec start-status pipe as one StartStatus; the helper exits 127.
// As PID 1 of a contained step's PID namespace it is the namespace's init
// instead (init.h): it forks the leader, which runs those steps.
// Run in a probe mode it answers one question by its exit status instead.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "../core/child_steps.h"
#include "../core/helper_plan.h"
#include "../core/mount_view.h"
#include "init.h"

using namespace exactspawn;

namespace {

int status_fd = -1;

// A descriptor number from argv (-1 for none); -2 when malformed.
int fd_argument(const char* text) {
  if (text[0] == '-' && text[1] == '1' && text[2] == '\0') return -1;
  long value = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9' || value > 1 << 24) return -2;
    value = value * 10 + (*p - '0');
  }
  return text[0] == '\0' ? -2 : static_cast<int>(value);
}

[[noreturn]] void fail(const StepFailure& failure) {
  if (status_fd >= 0) report_start_status(status_fd, failure);
  _exit(127);
}

// Reads the whole plan (a sealed memfd) into memory and closes it.
char* read_plan(int fd, size_t* size) {
  struct stat st {};
  if (fstat(fd, &st) != 0) fail({-errno, "fstat", "helper"});
  if (st.st_size <= 0 || st.st_size > (1L << 30)) fail({-EINVAL, "read", "helper"});
  *size = static_cast<size_t>(st.st_size);
  char* bytes = static_cast<char*>(std::malloc(*size));  // 16-aligned
  if (bytes == nullptr) fail({-ENOMEM, "read", "helper"});
  size_t done = 0;
  while (done < *size) {
    ssize_t n = pread(fd, bytes + done, *size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail({n < 0 ? -errno : -EIO, "read", "helper"});
    done += static_cast<size_t>(n);
  }
  close(fd);
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 127;
  const int plan_fd = fd_argument(argv[1]);
  status_fd = fd_argument(argv[2]);
  if (plan_fd < 0 || status_fd < -1) return 127;
  // Inherited open across the helper's exec; closed at the target's.
  if (status_fd >= 0 && fcntl(status_fd, F_SETFD, FD_CLOEXEC) != 0) {
    fail({-errno, "fcntl", "helper"});
  }

  size_t size = 0;
  char* bytes = read_plan(plan_fd, &size);
  DecodedPlan plan;
  if (int err = decode_plan(bytes, size, &plan); err != 0) fail({err, "read", "helper"});
  if (plan.mode == PlanMode::kProbeUserNamespaceView) return try_user_namespace_view() == 0 ? 0 : 1;
  // A PID namespace's own user namespace: its ids mapped here (the vfork
  // child kept CAP_SYS_ADMIN for this), in the probe too.
  if (plan.controls.pid_namespace == PidNamespace::kPidAndUser) {
    StepFailure failure;
    if (map_user_namespace(plan.namespace_uid_map, plan.namespace_gid_map, &failure) != 0) {
      fail(failure);
    }
  }
  // Started in the namespaces, the ids mapped: it works.
  if (plan.mode == PlanMode::kProbePidNamespace) return 0;
  if (plan.controls.pid_namespace != PidNamespace::kNone) run_as_init(&plan, status_fd);

  StepFailure failure;
  if (run_target_steps(plan.request, plan.controls, plan.parent, &failure) != 0) fail(failure);
  exec_target(plan.request, &failure);
  fail(failure);
}
