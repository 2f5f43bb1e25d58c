// pid_namespace.cc — see pid_namespace.h.
#include "pid_namespace.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "capabilities.h"
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
