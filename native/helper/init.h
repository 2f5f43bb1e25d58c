// init.h — the exec helper as PID 1 of a contained step's PID namespace
// (contain mechanism "pid-namespace"; core/child_path.h PidNamespace). The
// host's vfork child was cloned into the new namespace (CLONE_NEWPID, with
// CLONE_NEWUSER where the host lacks CAP_SYS_ADMIN) and exec'ed the helper,
// which runs this. See pid_namespaces(7), user_namespaces(7), prctl(2)
// PR_SET_PDEATHSIG, sigwaitinfo(2).
#pragma once

#include "../core/helper_plan.h"

namespace exactspawn {

// The init's whole life, in order (a user namespace's ids were mapped by the
// vfork child, core/child_steps.h map_user_namespace): the parent-death signal (SIGKILL: the host's
// death ends the namespace; a host already gone is seen on the status pipe, whose read end it
// held), the leader vforked into a process group of its own, where it runs the target steps and
// execs the target (a failed step goes to the status pipe, exit 127). Then, with every signal still
// blocked, it waits: a forwarded signal (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1/2, SIGWINCH,
// SIGCONT, …; PID 1 receives from the host only what it handles, the kernel drops the rest) goes to
// the leader's group, a SIGCHLD reaps every child it has (orphans included). When the leader has
// ended: kill(-1, SIGKILL) inside the namespace, every child reaped, the leader's wait status
// reported on the status pipe (child_steps.h StartStatus), exit 0. Never returns.
[[noreturn]] void run_as_init(DecodedPlan* plan, int status_fd);

}  // namespace exactspawn
