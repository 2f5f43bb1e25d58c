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
// vfork child, core/child_steps.h map_user_namespace):
//   refuse unless it is pid 1 (kill(-1) below must stay inside a namespace);
//   the parent-death signal (SIGKILL: the host's death ends the namespace; a
//     host already gone shows on the status pipe, whose read end it held);
//   not dumpable (prctl PR_SET_DUMPABLE 0: the step's processes without
//     CAP_SYS_PTRACE cannot ptrace or read it);
//   the leader vforked into a process group of its own, where it clears the
//     ambient capabilities, runs the target steps and execs the target (a
//     failed step goes to the status pipe, exit 127);
//   with every signal still blocked (a PID 1 gets only signals it blocks or
//     handles), sigwaitinfo: a forwarded signal (SIGTERM, SIGINT, SIGHUP,
//     SIGQUIT, SIGUSR1/2, SIGWINCH, SIGCONT, …) goes to the leader's group, a
//     SIGCHLD reaps every child that ended (orphans included);
//   when the leader has ended: kill(-1, SIGKILL) inside the namespace, every
//     child reaped, the leader's wait status reported on the status pipe
//     (child_steps.h StartStatus), and the same status as its own exit.
// Never returns.
[[noreturn]] void run_as_init(DecodedPlan* plan, int status_fd);

}  // namespace exactspawn
