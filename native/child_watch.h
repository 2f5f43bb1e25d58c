// child_watch.h — watches one spawned child's exit on the addon's own event
// loop and exposes it to JavaScript as a ChildHandle. Implemented in
// child_watch.cc (the exit watch and teardown), pipe_capture.cc (captured
// output), exit_delivery.cc (the values and calls into JavaScript) and
// child_handle.cc (the handle's methods), over watch_state.h.
//
// A pidfd (pidfd_open(2)) is registered with the environment's event set
// (watch_events.cc, core/event_set.h: one epoll set per environment, whatever
// the number of children), waited for by the host's own loop under Node or
// by a thread of the set's own elsewhere (host_loop.h), so the addon runs
// under Node, Bun and Deno alike. On the
// first report exactly that pid is reaped with wait4(2), the pidfd is
// unregistered and closed, and the JS callback receives
// { exitCode, signal, userCpuMicros, systemCpuMicros, maxRssKiB }. A cleanup hook
// (napi_add_env_cleanup_hook) stops the thread and every live watch when
// the environment is torn down (worker exit, process exit); children still
// running are handed to the orphan reaper, never killed.
//
// Captured output: the parent's ends of the pipes JavaScript asks the addon
// to capture are made O_NONBLOCK (a drained pipe reads EAGAIN, never
// blocks), registered the same way and read into
// memory, at most `limit` bytes each. A pipe ends at EOF, a read error, or
// overflow (more than `limit` bytes: the first `limit` are kept, the fd is
// closed so the writer gets EPIPE, and onOverflow(slot) is called once the
// dispatcher's pass is over).
// The exit is delivered only when the child is reaped and every captured
// pipe has ended, with `output[slot]` holding each pipe's bytes in one
// Buffer. takeOver(slot) stops reading a pipe and hands its fd (or -1 once
// it has ended) and the bytes read so far to JavaScript, which then owns the
// rest of that stream. Collect, then call back (exit_delivery.cc): the
// callbacks run after the dispatcher's pass, never while a watch is being
// changed, and a method JavaScript calls (takeOver, endCaptureAtExit) never
// delivers the exit before it returns: the exit is delivered on a later
// turn, through the environment's thread-safe function.
// endCaptureAtExit() ends every capture once the child is reaped (a daemon
// it left may hold the pipes for ever), so the exit is delivered with what
// was read. A value that cannot be built (an output too large for a Buffer)
// is delivered as an Error instead: the exit is always delivered.
//
// Process groups: killGroup(sig) signals -pid only while the child is
// unreaped (its zombie pins the group id; after the reap the number may be
// anyone's) and returns -ESRCH after. killGroupAtExit(sig) sends sig to the
// group at the moment the child has exited but is not yet reaped.
#pragma once

#include <napi.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "core/cgroup.h"
#include "core/deadline_plan.h"

namespace exactspawn {

// Per-environment set-up: the ChildHandle class and the teardown hook.
void InitChildWatch(Napi::Env env, Napi::Object exports);

// A child that changes its credentials is not waited for at its start
// (core/child_path.h): its start-status pipe is read when the child is
// reaped, and a step that failed before exec is delivered as the error
// spawnSync throws for it (code, errno, syscall, path: StartFailurePath)
// instead of an exit.
struct StartReport {
  int fd = -1;  // the pipe's read end; the watch owns it once WatchChild returns
  // A PID-namespace step's leader pidfd (core/pid_namespace.h
  // receive_leader_pidfd), or -1; the watch owns it once WatchChild returns.
  int leader_pidfd = -1;
  std::string file;
  std::string cwd;
};

// The pipes the addon reads itself for one child.
struct CaptureRequest {
  std::vector<int> slots;  // child fd numbers, each with a parent read end in parent_ends
  size_t limit = 0;        // bytes kept per pipe
  napi_value on_overflow = nullptr;
};

// Starts watching `pid` (just spawned). Returns the ChildHandle
// { pid, kill(sig), killGroup(sig), killGroupAtExit(sig), endCaptureAtExit(),
// ref(), unref(), hasRef(), takeOver(slot) } (see child_handle.cc).
// On success the read ends of the captured slots are owned by the watch and
// set to -1 in parent_ends. On failure the child is killed and reaped, a
// system error is thrown and parent_ends is left to the caller.
// guard_group: the child leads its own process group, which is registered
// with the watchdog (core/watchdog.h) first and released before the reap; if
// the environment ends while the child runs, the group is SIGKILLed.
// start: see StartReport (nullptr or fd -1: the child's start is known).
// deadline: the run's plan (core/deadline_plan.h), executed by the deadline
// keeper off this thread: its timeout is armed before WatchChild returns, and
// the handle's endNow()/ending() begin and read its ending. nullptr: none.
// cgroup: a contained step's cgroup (core/cgroup.h), taken over by the watch
// on success (its path is then empty): the keeper kills it whole at the
// ending's escalation, the watch kills it at the leader's reap and delivers
// the exit once the tree is gone, with `tree` (its usage) in the exit.
// pidfd: the child's pidfd if the start made one (owned by the watch from
// the call on, closed on failure), else -1: the watch opens one.
// positional: onExit gets the exit as arguments (exitCode, signal,
// userCpuMicros, systemCpuMicros, maxRssKiB, output?, tree?, exitedAt), not as one
// object; a failure is still one Error argument (exit_delivery.cc).
Napi::Object WatchChild(Napi::Env env, pid_t pid, Napi::Function on_exit,
                        const CaptureRequest& capture, std::vector<int>* parent_ends,
                        bool guard_group = false, StartReport* start = nullptr,
                        const DeadlinePlan* deadline = nullptr, StepCgroup* cgroup = nullptr,
                        bool positional = false, int pidfd = -1);

}  // namespace exactspawn
