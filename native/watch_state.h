// watch_state.h — the state the exit watch (child_watch.cc), the pipe
// capture (pipe_capture.cc), the delivery to JavaScript (exit_delivery.cc)
// and the ChildHandle methods (child_handle.cc) share. Internal to the addon.
//
// Everything here runs on the thread of the environment that spawned the
// child; nothing is locked. Only the environment's EventSet (whose thread,
// where it has one, waits for the fds) is shared, and it locks itself.
#pragma once

#include <napi.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/cgroup.h"
#include "core/child_exit.h"
#include "core/child_path.h"
#include "core/deadline_keeper.h"
#include "core/event_set.h"
#include "core/pipe.h"
#include "core/reap.h"

namespace exactspawn {

class ChildHandle;
struct EnvState;
struct LoopWaiter;
struct Watch;

// One captured pipe: the parent's read end, polled and read by the addon.
struct Reader {
  Watch* watch = nullptr;
  int slot = 0;
  int fd = -1;                // owned while >= 0: closed at the end, or handed to JavaScript
  uint64_t token = 0;         // its registration with the event thread while active
  bool active = false;        // registered with the event thread: read when it reports
  bool taken = false;         // handed to JavaScript by takeOver()
  bool overflow_due = false;  // went over the limit; onOverflow not called yet
  std::string bytes;          // at most the watch's limit
};

// A watch's lifetime, one state at a time; every move goes through MoveTo,
// which checks it against this table:
//   kStarting → kWatching   the JS side is attached (WatchChild returns)
//   kStarting → kAbandoned  the spawn failed half-way (no JS side ever)
//   kWatching → kReaped     wait4 answered (an exit, or an error)
//   kWatching → kTornDown   the environment ended while the child ran
//   kReaped   → kDelivered  the exit reached JavaScript
//   kReaped   → kTornDown   the environment ended while the capture ran
// kAbandoned, kDelivered and kTornDown are final: the JS side is detached
// and the watch is freed once nothing of it is registered.
enum class Life : uint8_t { kStarting, kWatching, kReaped, kDelivered, kAbandoned, kTornDown };

struct Watch {
  Life life = Life::kStarting;
  EnvState* state = nullptr;
  pid_t pid = 0;
  int pidfd = -1;           // open (and registered with the event thread) until the reap
  uint64_t token = 0;       // the pidfd's registration
  bool guarded = false;     // its group is registered with the watchdog (released before the reap)
  bool positional = false;  // the exit goes to onExit as arguments (child_watch.h WatchChild)
  // Sent to the child's group when its leader is a zombie, just before the
  // reap (the zombie pins the group id, so no other process can hold it).
  int group_exit_signal = 0;
  // The reap and every signal by number, under one lock the deadline keeper
  // shares (core/kill_target.h); always set once the watch is built.
  std::shared_ptr<LeaderTarget> leader;
  // The run's deadline plan, executed off this thread (core/deadline_keeper.h);
  // null when spawn was given none. Cancelled when the watch is detached.
  std::shared_ptr<RunEnding> ending;
  // Once reaped, stop reading the captured pipes and deliver what was read
  // (a process the child left behind may hold them open for ever).
  bool end_capture_at_exit = false;
  int reap_error = 0;
  ChildExit exit;
  // A helper child's start-status pipe (owned), read at the reap; a
  // failed start is delivered as start_error with the step and its path.
  int start_status_fd = -1;
  int start_error = 0;
  // A PID-namespace step's leader, watched by its own pidfd (leader_watch.cc)
  // besides the init's: when it has ended the init is SIGKILLed, whatever a
  // tracer does to it, and its status (read while it was a zombie) replaces
  // the init's when the init could not report it.
  int leader_pidfd = -1;
  uint64_t leader_token = 0;
  bool leader_exit_known = false;
  int leader_wait_status = 0;
  bool leader_ended = false;  // the init's grace (kInitGraceMs) is running
  ChildPathFailure start_failure;
  std::string start_file;
  std::string start_cwd;
  // A contained step's cgroup (core/cgroup.h; path empty: none, or removed).
  // At the leader's reap it is killed and its cgroup.events watched until the
  // tree is gone (tree_pending); the usage is read, the cgroup removed, and
  // only then is the exit delivered (tree_watch.cc).
  StepCgroup cgroup;
  // The same cgroup as the deadline keeper's kill target (killed at the
  // escalation); told when the cgroup is removed. Null when not contained.
  std::shared_ptr<TreeTarget> tree;
  uint64_t cgroup_token = 0;  // cgroup.events' registration while tree_pending
  bool tree_pending = false;
  bool has_usage = false;
  CgroupUsage usage;
  ReapBackoff backoff;   // while the pidfd reports but the child is not waitable (traced)
  bool ref = true;       // JavaScript's ref()/unref()
  bool holding = false;  // counted in EnvState::holds (keeps the host's loop alive)
  size_t limit = 0;
  std::vector<std::unique_ptr<Reader>> readers;
  ChildHandle* handle = nullptr;
  napi_ref on_exit = nullptr;
  napi_ref on_overflow = nullptr;
  napi_ref handle_ref = nullptr;  // keeps the JS handle alive until the exit is delivered
  // Queued for the callbacks after the dispatcher's pass (exit_delivery.cc);
  // set until they have run, so a watch is never queued twice nor freed
  // while JavaScript it called back runs.
  bool due = false;
  Watch* due_next = nullptr;
  Watch* prev = nullptr;
  Watch* next = nullptr;
};

// What a token registered with the event thread stands for: a captured
// pipe when reader is set, the watch's cgroup.events when tree, else the
// watch's pidfd.
struct Source {
  Watch* watch;
  Reader* reader;
  bool tree = false;
  bool leader = false;  // the watch's leader_pidfd
};

struct EnvState {
  napi_env env = nullptr;
  napi_ref handle_ctor = nullptr;  // deleted by FinalizeState (valgrind: 40 bytes per env)
  // The pidfds and captured pipes (and reap retries) of every watch, waited
  // for from the first watch on by the host's loop when host_loop_wanted and
  // the host exports it (loop_waiter), else by the set's own thread.
  EventSet events;
  bool host_loop_wanted = false;
  LoopWaiter* loop_waiter = nullptr;
  // Carries the thread's reports onto this environment's thread; ref'd only
  // while `holds` > 0.
  napi_threadsafe_function events_to_js = nullptr;
  std::unordered_map<uint64_t, Source> sources;
  uint64_t next_token = EventSet::kFirstToken;
  size_t holds = 0;  // watches whose child (or capture) should keep the host alive
  std::vector<uint64_t> spare_batch;
  // Watches whose callbacks are due, in order (Watch::due_next).
  Watch* due_head = nullptr;
  Watch* due_tail = nullptr;
  bool in_pass = false;         // Dispatch runs: what is queued is served before it returns
  bool pass_requested = false;  // a pass is asked for through events_to_js (RequestPass)
  bool tearing_down = false;
  bool hook_done = false;
  bool env_gone = false;
  Watch* head = nullptr;
  size_t live = 0;
  std::unique_ptr<char[]> scratch;  // kReadChunk bytes, allocated on the first capture
};

// child_watch.cc
// Moves w to `to` when the table above allows it. An impossible move is
// refused (w stays as it is), counted (InvalidWatchMoves, exported through
// debugCounters()) and returns false: a fault never aborts the host.
bool MoveTo(Watch* w, Life to);
uint64_t InvalidWatchMoves();
// The child's pid (and group id) may belong to someone else from here on.
inline bool PastReap(const Watch* w) {
  return w->life != Life::kStarting && w->life != Life::kWatching;
}
// The JS side is detached for good.
inline bool Finished(const Watch* w) {
  return w->life == Life::kDelivered || w->life == Life::kAbandoned || w->life == Life::kTornDown;
}
void MaybeFree(Watch* w);
// Moves w to a final state and detaches the JS side: the handle stops
// signalling, the references go.
void Detach(Watch* w, Life to);
// The pidfd turned readable (or a retry is due).
void OnPidfdReady(Watch* w);

// watch_events.cc
// Makes the thread-safe function; 0 or a Node-API status.
napi_status InitWatchEvents(napi_env env, EnvState* s);
// Starts waiting for the event set unless something waits already (the
// host's loop or a thread, see EnvState); 0 or -errno with *failed_call set.
int StartWatchEvents(EnvState* s, const char** failed_call);
// Stops waiting (teardown): joins the thread; the host's loop poll stopped before.
void StopWatchEvents(EnvState* s);
// useHostLoop(wanted): asks for the host's loop (before the first watch);
// returns "host-loop" or "thread", what the watch uses or will use.
Napi::Value UseHostLoop(const Napi::CallbackInfo& info);
// Registers fd; 0 or -errno (epoll_ctl).
int WatchFd(Watch* w, Reader* r, int fd, uint64_t* token);
// Registers a PID-namespace leader's pidfd; 0 or -errno.
int WatchLeaderFd(Watch* w, int fd, uint64_t* token);
// Registers a cgroup.events fd (its news is EPOLLPRI); 0 or -errno.
int WatchTreeFd(Watch* w, int fd, uint64_t* token);
// Asks for one more report of a registered cgroup.events fd.
void RearmTreeFd(EnvState* s, int fd, uint64_t token);
// Asks for one more report of a registered fd.
void RearmFd(EnvState* s, int fd, uint64_t token);
// Asks for one more report of a registered fd after delay_ms.
void RetryFd(EnvState* s, int fd, uint64_t token, int delay_ms);
// Forgets a registration whose one-shot event has reported and which was
// not armed again, without epoll_ctl(DEL): closing its fd next removes it.
void ForgetFd(EnvState* s, uint64_t* token);
// Unregisters fd (before it is closed or handed on).
void UnwatchFd(EnvState* s, int fd, uint64_t* token);
// From a method JavaScript called (no pass running): asks for a pass on this
// thread soon, through the thread-safe function, to run the queued callbacks.
void RequestPass(EnvState* s);
// Recomputes whether the watch keeps the host's loop alive.
void UpdateHold(Watch* w);
// Whether the watch keeps the host's loop alive (hasRef()).
bool Holds(const Watch* w);

// pipe_capture.cc
// Starts reading one captured read end; 0 or -errno (the reader is then inactive).
int StartReader(Watch* w, Reader* r);
// The read end turned readable.
void OnPipeReady(Reader* r);
// Stops reading; closes the fd too when asked (else the caller now owns it).
void StopReader(Reader* r, bool close_fd_too);
// Stops every reader still active, closing its fd: its output ends here.
void EndCapture(Watch* w);

// leader_watch.cc
// Watches a PID-namespace step's leader by `pidfd` (owned from the call on;
// closed when it cannot be registered: the step then ends through its init).
void WatchLeader(Watch* w, int pidfd);
// The leader's pidfd turned readable (or a retry is due).
void OnLeaderReady(Watch* w);
// Stops watching the leader and closes its pidfd (any time; idempotent).
void StopWatchingLeader(Watch* w);
// At the init's reap: the leader's status when its init did not report it.
void ApplyLeaderExit(Watch* w, bool leader_reported);

// tree_watch.cc
// The leader of a contained step is reaped: kill its cgroup and queue the
// exit (QueueCallbacks) once the tree is gone. Never calls JavaScript.
void EndTree(Watch* w);
// The step's cgroup.events reported a change.
void OnTreeReady(Watch* w);
// Environment teardown: kill the tree now and remove its cgroup (blocking
// for at most a moment).
void TearDownTree(Watch* w);

// exit_delivery.cc — collect, then call back (libuv's uv__wait_children):
// nothing that changes a watch calls JavaScript. Changes queue the watch;
// the dispatcher (watch_events.cc) runs the callbacks after its pass, so no
// callback runs while a watch is being changed, and a method JavaScript
// calls (takeOver, endCaptureAtExit) never delivers before it returns.
// Queues w when a callback is due: an overflow JavaScript has not heard of,
// or the exit (reaped, no captured pipe still read). Never calls JavaScript.
void QueueCallbacks(Watch* w);
// The dispatcher's second half, on the environment's thread: for each queued
// watch in order, onOverflow(slot) for each overflowed pipe, then the exit
// when it is due. Watches queued by those callbacks are served in the same
// call. Returns at once when the environment's teardown begins.
void RunQueuedCallbacks(EnvState* s);

// child_handle.cc
Napi::Function DefineChildHandle(Napi::Env env);
// Binds a new JS handle object to its watch (and to its run's ending, which
// the handle keeps: the record stays readable after the exit is delivered).
void AttachHandle(Napi::Object object, Watch* w);
// The handle object's native side stops reaching the watch.
void DetachHandle(ChildHandle* handle);

}  // namespace exactspawn
