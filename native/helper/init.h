// init.h — the exec helper as PID 1 of a contained step's PID namespace
// (contain mechanism "pid-namespace"; core/child_path.h PidNamespace). The
// host's vfork child was cloned into the new namespace (CLONE_NEWPID, with
// CLONE_NEWUSER where the host lacks CAP_SYS_ADMIN) and exec'ed the helper,
// which runs this. See pid_namespaces(7), user_namespaces(7), prctl(2)
// PR_SET_PDEATHSIG, sigwaitinfo(2).
#pragma once

#include "../core/helper_plan.h"

namespace exactspawn {

// The init's whole life (its ids already mapped by the helper's main.cc):
// the steps are run_as_init's code in init.cc, in their order, each with its
// why beside it. Never returns.
[[noreturn]] void run_as_init(DecodedPlan* plan, int status_fd);

}  // namespace exactspawn
