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

namespace exactspawn {

// The host's side of the leader's first record (child_steps.h
// kLeaderRecord), right after a PID-namespace step's spawn: waits (poll(2),
// no timeout) for the first record on the step's status socket, the read end
// spawn_child_path() returned. Only the helper's own code runs before the
// leader sends it (the init's start, its vfork, the leader's first call), so
// the wait is bounded by trusted code, never by the step's. The leader's
// pidfd (close-on-exec) when that record came with one; else -1, and a
// failure record, or nothing, is left for read_start_status().
int receive_leader_pidfd(int status_fd);

// The exit status of the ended leader behind `pidfd` while it is a zombie
// (the field exit_code of /proc/<pid>/stat, proc(5); the pid read from
// /proc/self/fdinfo/<pidfd>): 0 with *wait_status set; -ESRCH when it has
// been reaped already (its init then reported it, child_steps.h), -EAGAIN
// while it runs, or another -errno when /proc cannot tell.
int leader_exit_status(int pidfd, int* wait_status);

// How long the host lets a PID namespace's init end the namespace itself once
// the leader has ended, before it SIGKILLs the init. The init kills what is
// left and reaps it, so the tree's CPU time counts in the init's rusage (the
// step's resourceUsage); killed at once, the init would lose what it had not
// reaped yet. Only an init held back (a tracer's stop) waits out the grace.
constexpr int kInitGraceMs = 1000;

}  // namespace exactspawn
