// child_steps.h — the steps a child takes between its start and the exec of
// its target, each an async-signal-safe function (raw system calls, no
// allocator, no lock) that returns 0 or fills a StepFailure (step_failure.h).
// Written once, run by two callers:
// - the addon's vfork child (child_path.cc), on the host's memory, for a child
//   that keeps the host's credentials and is not sandboxed: every step;
// - the exec helper (native/helper/main.cc), in its own memory, for a child
//   that changes credentials or is sandboxed: the vfork child runs the entry
//   steps and execs the helper, the helper runs the target steps.
//
// The order is written once, as code: the entry steps (always in the vfork
// child, so they are done when spawn() returns) in child_path.cc child_main,
// the target steps in run_target_steps (child_steps.cc), each step's why
// beside its line; then the target's execve(2).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "child_path.h"
#include "stdio_plan.h"
#include "step_failure.h"

// Code that runs in the vfork child, on its borrowed stack: never
// instrumented by AddressSanitizer, whose shadow writes for a borrowed stack
// would land in the parent's shadow memory (CLONE_VM), left poisoned by a
// child that never returns.
#define EXACTSPAWN_CHILD_CODE __attribute__((no_sanitize_address, noinline))

namespace exactspawn {

// What a child writes into its close-on-exec start-status pipe when a step
// fails: one write(2) of less than PIPE_BUF bytes, so the reader gets all of
// it or nothing. Nothing arrives when the exec succeeds. The write ends after
// the path's NUL (a longer path is cut at kStatusPathSize - 1 bytes).
// The init of a contained step's PID namespace (native/helper/init.cc) keeps
// the channel (there a SOCK_SEQPACKET socket, not a pipe) until the end and
// writes two more records there: first, from its leader before any target
// step, a LeaderRecord carrying the leader's pidfd (SCM_RIGHTS), so the host
// watches the leader itself (its init may be stopped by a tracer); then,
// once the leader has ended and before it is reaped, a StartStatus with
// error 0, leader_ended 1 and the leader's wait(2) status, so the host
// reports the leader's exit, not the init's. A leader's failed start comes
// between the two (written before it exits).
constexpr size_t kStatusPathSize = 4000;
struct StartStatus {
  int32_t error;         // positive errno; 0 in a leader's end
  int32_t leader_ended;  // 1: a PID namespace's leader ended with wait_status
  int32_t wait_status;
  char syscall[sizeof(ChildPathFailure::syscall)];
  char step[sizeof(ChildPathFailure::step)];
  char path[kStatusPathSize];  // the failure's path, "" when it named none
};
static_assert(sizeof(StartStatus) <= 4096, "a start status must fit one PIPE_BUF write");

// Writes `failure` as a StartStatus into fd (one write).
void report_start_status(int fd, const StepFailure& failure);

// Writes a leader's end (wait(2) status) as a StartStatus into fd (one write).
void report_leader_end(int fd, int wait_status);

// The leader's first record: these bytes, with its pidfd attached when
// pidfd_open(2) gave one. Shorter than any StartStatus, so the host tells
// them apart by size (pid_namespace.h receive_leader_pidfd).
constexpr char kLeaderRecord[8] = {'l', 'e', 'a', 'd', 'e', 'r', '\0', '\0'};

// Sends kLeaderRecord with the calling process's pidfd through the socket fd
// (one sendmsg(2); nothing attached when pidfd_open fails). Raw calls only:
// the leader runs it on its init's memory (vfork).
void report_leader_pidfd(int fd);

// Entry steps.
int reset_signals(StepFailure* failure);
int enter_session(const SpawnRequest& request, StepFailure* failure);
// For a child cloned into a user namespace of its own with its PID namespace
// (PidNamespace::kPidAndUser), two steps:
// - in the vfork child, CAP_SYS_ADMIN kept across the helper's exec as an
//   ambient capability (its uid is not mapped yet, so the exec would drop
//   every capability; the init needs this one to map its ids and for a
//   mount view, and clears the ambient set in the leader): keep_admin_capability;
// - in the helper (its own memory, dumpable again after its exec, so its
//   /proc/self files are its own even when the host made itself
//   non-dumpable): "deny" to /proc/self/setgroups, uid_map and gid_map
//   ("ID ID 1\n": the host's ids mapped to themselves): map_user_namespace.
// Raw calls on the child's own credentials: the host's memory is not touched.
int keep_admin_capability(StepFailure* failure);
int map_user_namespace(const char* uid_map, const char* gid_map, StepFailure* failure);
// Runs the stdio plan; the `keep_count` descriptors in keep[] are first moved
// above every fd the plan touches (close-on-exec; keep[] is updated, -1
// entries ignored) and survive its close_range.
int run_stdio(const StdioStep* steps, size_t count, int ceiling, int* keep, size_t keep_count,
              StepFailure* failure);

// The target steps, in their order (child_steps.cc). `parent` is the host's
// pid (the parent death check).
int run_target_steps(const SpawnRequest& request, const ExecControls& controls, pid_t parent,
                     StepFailure* failure);

// execve(2) of the target; returns only on failure (execve, step exec).
int exec_target(const SpawnRequest& request, StepFailure* failure);

}  // namespace exactspawn
