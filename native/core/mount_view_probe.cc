// mount_view_probe.cc — probe_mount_view() of mount_view.h (host side: it
// runs the exec helper, so it lives apart from what the helper links).
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "capabilities.h"
#include "child_path.h"
#include "helper_plan.h"
#include "mount_view.h"

namespace exactspawn {

namespace {

bool has_call(long number, long a, long b, long c, long d, long e) {
  return syscall(number, a, b, c, d, e) >= 0 || errno != ENOSYS;
}

}  // namespace

MountViewUnavailable probe_mount_view() {
  // Arguments each kernel that has the call refuses before doing anything:
  // an unknown flag, a zero size.
  const bool calls =
      has_call(kOpenTree, -1, 0, ~0L, 0, 0) && has_call(kMoveMount, -1, 0, -1, 0, ~0L) &&
      has_call(kMountSetattr, -1, 0, ~0L, 0, 0) && has_call(kOpenat2, -1, 0, 0, 0, 0);
  if (!calls) return MountViewUnavailable::kKernel;
  if (holds_capability(kCapSysAdmin)) return MountViewUnavailable::kNone;
  // The user-namespace way, tried by the exec helper in its own memory (the
  // host never forks; a helper that cannot run makes no view either).
  StepFailure failure;
  const int status =
      run_helper_probe(static_cast<int>(PlanMode::kProbeUserNamespaceView), &failure);
  return status == 0 ? MountViewUnavailable::kUserNamespace : MountViewUnavailable::kPrivilege;
}

}  // namespace exactspawn
