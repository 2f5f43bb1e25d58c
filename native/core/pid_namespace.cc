// pid_namespace.cc — see pid_namespace.h.
#include "pid_namespace.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "capabilities.h"
#include "helper_plan.h"

namespace exactspawn {

namespace {

bool holds_sys_admin() {
  CapHeader header = {kCapabilityVersion3, 0};
  CapData data[2] = {};
  return syscall(SYS_capget, &header, data) == 0 && (data[0].effective & (1U << kCapSysAdmin)) != 0;
}

}  // namespace

int probe_pid_namespace(PidNamespace* how, StepFailure* failure) {
  *how = holds_sys_admin() ? PidNamespace::kPid : PidNamespace::kPidAndUser;
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
