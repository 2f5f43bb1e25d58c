// watchdog.h — one helper process per host process that SIGKILLs registered
// process groups when the host ends, however it ends (exit, uncaught
// exception, fatal signal, SIGKILL, the OOM killer).
//
// The host keeps the write end of a pipe (O_CLOEXEC, so no other child
// inherits it); the watchdog reads the other end as its stdin. Every
// registration is one line "+<pgid>\n", every release "-<pgid>\n", every
// cgroup sub-tree "=<path>\n" (each write is below PIPE_BUF, so atomic).
// When the host dies the kernel closes the write end, the watchdog reads EOF
// — after every line already written — and kills each group and cgroup
// sub-tree still registered. The program itself is chosen by
// the caller (TypeScript: a POSIX sh script, see src/spawn/watchdog.ts); it
// is started with posix_spawn (spawn_process) with an empty environment, cwd
// "/", stdin the pipe, stdout and stderr /dev/null, every other fd closed (so
// it never holds the host's stdout open), in a session of its own (so
// signals for the host's process group or terminal do not reach it), and
// handed to the orphan reaper (so it never stays a zombie of a live host).
//
// A group id is safe to signal only while its leader is unreaped (a zombie
// pins the id): callers release a group BEFORE they reap its leader. If the
// watchdog dies early (a step of the same uid can kill it), a monitor thread
// that polls a duplicate of its pidfd starts a new one at once (a write that
// meets EPIPE first does the same). Every live registration is written into
// the new pipe before the new watchdog is spawned (the pipe grown to fit when
// the kernel allows; what does not fit follows, the watchdog reading), so a
// watchdog that runs knows them from its start.
// The host's end of the pipe is O_NONBLOCK: a registration never waits for
// the watchdog on the JavaScript thread. A watchdog that leaves a whole pipe
// of lines unread (a same-uid step can SIGSTOP it) is SIGKILLed through its
// pidfd and replaced the same way when a write meets EAGAIN.
//
// Process-wide (worker threads share it), guarded by a mutex. Plain C++;
// returns 0 (or a pid) or a negative errno. See pipe(7), posix_spawn(3),
// setsid(2), kill(2), waitid(2).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "step_failure.h"

namespace exactspawn {

// Records the program on the first call (later calls keep the first one)
// and starts it unless it runs already. Returns the watchdog's pid or -errno
// (then *failure, if given, names the call that failed, step "cleanup").
int watchdog_start(const std::string& file, const std::vector<std::string>& argv,
                   StepFailure* failure = nullptr);

// Whether watchdog_start has succeeded once in this process.
bool watchdog_configured();

// Registers the group led by `pgid` (a child of this process, not reaped).
// Returns 0, or -errno (-ENOTCONN before watchdog_start) and then the group
// is not registered (*failure, if given, names the call that failed).
int watchdog_guard(pid_t pgid, StepFailure* failure = nullptr);

// Registers a cgroup directory (core/cgroup.h: the host's sub-tree of
// contained steps; one line "=<path>"): when the host ends the watchdog
// writes its cgroup.kill and removes it and the step cgroups in it. Never
// released: the sub-tree lives as long as the host. -EINVAL for a path with a
// newline or one too long for one atomic line; -ENOTCONN before
// watchdog_start.
int watchdog_guard_cgroup(const std::string& path, StepFailure* failure = nullptr);

// Unregisters the group. Call it before the leader is reaped.
void watchdog_release(pid_t pgid);

// Does now what the watchdog would do at the host's death, for one group:
// when `pgid` is registered, SIGKILLs the group and unregisters it. Call it
// before the leader is reaped (a host environment that ends while the child
// runs, or a child the host abandons). Returns whether it was registered.
bool watchdog_fire(pid_t pgid);

// For tests: the next `count` watchdog launches (0-3) each hold the thread
// that made them right after the watchdog was spawned, forever (the test
// SIGKILLs the host): a host killed at that moment shows what the new
// watchdog learnt from its start.
void watchdog_hold_next_launches(int count);

// True when `pid` (a child of this process) has exited and waits to be
// reaped, or can no longer be waited for; false while it runs. Does not reap
// (waitid WNOWAIT).
bool child_has_exited(pid_t pid);

}  // namespace exactspawn
