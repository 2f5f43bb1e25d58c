// pid_namespace.h — whether this host can run a contained step in a PID
// namespace of its own, and how (contain mechanism "pid-namespace"; the
// helper is the namespace's init, helper/init.h). A new PID namespace needs
// CAP_SYS_ADMIN in the user namespace that will own it: a host that holds it
// makes the PID namespace alone, one that does not makes a user namespace in
// the same clone (unprivileged user namespaces: kernel.unprivileged_userns_clone,
// user.max_user_namespaces). See pid_namespaces(7), user_namespaces(7),
// capget(2).
#pragma once

#include "child_path.h"
#include "step_failure.h"

namespace exactspawn {

// Tries it once: the exec helper started as PID 1 of a new namespace of the
// kind this host needs (a user namespace too when it lacks CAP_SYS_ADMIN),
// mapping its ids where it made a user namespace, exits 0. Returns 0 with
// *how set when that worked; else -errno (the clone's, or -EPERM when the
// helper could not map its ids) with *failure naming the call, *how still set
// to the kind tried. The host never forks; the library caches the answer.
int probe_pid_namespace(PidNamespace* how, StepFailure* failure);

}  // namespace exactspawn
