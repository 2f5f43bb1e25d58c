// child_watch.cc — the exit watch (see child_watch.h): one pidfd per child,
// registered with the environment's event thread (watch_events.cc); reaped
// on its first report; the per-environment state and its teardown. Pipe
// capture lives in pipe_capture.cc, the JS conversion in exit_delivery.cc,
// the JS handle in child_handle.cc.
#include "child_watch.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <new>

#include "core/child_exit.h"
#include "core/orphan_reaper.h"
#include "core/reap.h"
#include "core/watchdog.h"
#include "system_error.h"
#include "watch_state.h"

namespace exactspawn {

namespace {

void MaybeDelete(EnvState* state) {
  if (state->env_gone && state->hook_done && state->live == 0) delete state;
}

void Unlink(Watch* w) {
  EnvState* s = w->state;
  if (w->prev != nullptr) w->prev->next = w->next;
  if (w->next != nullptr) w->next->prev = w->prev;
  if (s->head == w) s->head = w->next;
}

// The pidfd leaves the event thread; it is closed unless `keep_fd` (the
// caller then owns it).
void StopWatchingPidfd(Watch* w, bool keep_fd) {
  if (w->pidfd < 0) return;
  UnwatchFd(w->state, w->pidfd, &w->token);
  if (!keep_fd) close(w->pidfd);
  w->pidfd = -1;
}

// After the reap: the one-shot registration has reported and was not armed
// again, and closing the pidfd takes it out of the epoll set, so no
// epoll_ctl(DEL) is needed. (Should a duplicate of the fd still be open
// somewhere, a late report names a token no longer known and is ignored.)
void CloseReapedPidfd(Watch* w) {
  if (w->pidfd < 0) return;
  ForgetFd(w->state, &w->token);
  close(w->pidfd);
  w->pidfd = -1;
}

// Environment teardown (worker exit, process exit): stop the event thread,
// then every watch, without calling into JavaScript; a child that is still
// running keeps running and is handed to the orphan reaper so it never stays
// a zombie. A plain cleanup hook suffices: nothing is left pending after it
// (no handle waits for a close callback), and Deno frees an async cleanup
// hook's handle twice.
void OnTeardown(void* arg) {
  EnvState* s = static_cast<EnvState*>(arg);
  s->tearing_down = true;
  StopWatchEvents(s);
  // Queued callbacks never run now (RunQueuedCallbacks stops at teardown).
  s->due_head = s->due_tail = nullptr;
  Watch* next;
  for (Watch* w = s->head; w != nullptr; w = next) {
    next = w->next;
    w->due = false;
    w->due_next = nullptr;
    if (!Finished(w)) {
      EndCapture(w);
      if (w->life == Life::kWatching && w->pidfd >= 0) {
        // Handed on below: the deadline keeper must not signal it any more.
        w->leader->release();
        // A child that must not outlive its host ends with the environment that started it.
        if (w->guarded) watchdog_fire(w->pid);
        w->guarded = false;
        ChildExit exit;
        bool handed =
            reap_child(w->pid, &exit) == 0 && hand_to_orphan_reaper(w->pid, w->pidfd) == 0;
        StopWatchingPidfd(w, handed);  // the reaper owns the pidfd when handed
      }
      Detach(w, Life::kTornDown);
    }
    TearDownTree(w);
    StopWatchingLeader(w);
    StopWatchingPidfd(w, false);
    MaybeFree(w);
  }
  s->hook_done = true;
  MaybeDelete(s);
}

void FinalizeState(Napi::Env env, EnvState* state) {
  // Instance-data finalizers may still delete references (node-addon-api's
  // FunctionReference-as-instance-data pattern does the same).
  if (state->handle_ctor != nullptr) {
    napi_delete_reference(env, state->handle_ctor);
    state->handle_ctor = nullptr;
  }
  state->env_gone = true;
  MaybeDelete(state);
}

// Ends a child whose watch could not be built: no child runs on unseen.
void EndChild(pid_t pid, int pidfd) {
  if (pidfd >= 0) close(pidfd);
  watchdog_fire(pid);  // a guarded group dies whole and is released before the reap
  kill(pid, SIGKILL);
  reap_child_blocking(pid);
}

[[noreturn]] void AbandonChild(Napi::Env env, pid_t pid, int pidfd, const StepFailure& failure) {
  EndChild(pid, pidfd);
  throw SystemError(env, failure);
}

// Undoes a half-built watch (freeing it); the pidfd and the pipe fds stay
// with the caller.
[[noreturn]] void AbandonWatch(Napi::Env env, Watch* w, const StepFailure& failure) {
  pid_t pid = w->pid;
  int pidfd = w->pidfd;
  StopWatchingPidfd(w, true);
  for (auto& r : w->readers) {
    StopReader(r.get(), false);
    r->fd = -1;
  }
  Detach(w, Life::kAbandoned);
  MaybeFree(w);
  AbandonChild(env, pid, pidfd, failure);
}

}  // namespace

namespace {

std::atomic<uint64_t> invalid_moves{0};

bool Allowed(Life from, Life to) {
  switch (from) {
    case Life::kStarting:
      return to == Life::kWatching || to == Life::kAbandoned;
    case Life::kWatching:
      return to == Life::kReaped || to == Life::kTornDown;
    case Life::kReaped:
      return to == Life::kDelivered || to == Life::kTornDown;
    default:
      return false;  // final
  }
}

}  // namespace

bool MoveTo(Watch* w, Life to) {
  if (!Allowed(w->life, to)) {
    invalid_moves.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  w->life = to;
  return true;
}

uint64_t InvalidWatchMoves() { return invalid_moves.load(std::memory_order_relaxed); }

// Frees the watch once JavaScript is detached, nothing is registered and no
// callback of it is queued or running.
void MaybeFree(Watch* w) {
  if (!Finished(w) || w->pidfd >= 0 || w->due || w->cgroup_token != 0) return;
  for (auto& r : w->readers) {
    if (r->active) return;
  }
  EnvState* s = w->state;
  StopWatchingLeader(w);
  if (w->start_status_fd >= 0) close(w->start_status_fd);
  if (!w->cgroup.path.empty()) TearDownTree(w);  // a watch abandoned half-built
  Unlink(w);
  delete w;
  s->live--;
  MaybeDelete(s);
}

void OnPidfdReady(Watch* w) {
  if (w->life != Life::kWatching || w->pidfd < 0) return;
  EnvState* s = w->state;
  if (w->guarded) {
    if (!child_has_exited(w->pid)) {  // not waitable yet (traced): ask again later
      RetryFd(s, w->pidfd, w->token, not_waitable_yet(&w->backoff));
      return;
    }
    watchdog_release(w->pid);  // before the reap: afterwards the group id may be reused
    w->guarded = false;
  }
  // The group's signal at the leader's exit (asked from JavaScript, or by an
  // ending), then the reap, under the lock the deadline keeper shares.
  int retry_ms = 0;
  int r = w->leader->reap(w->group_exit_signal, &w->exit, &w->backoff, &retry_ms);
  if (r == 0) {  // not waitable yet (traced): ask again after the back-off, never at once
    RetryFd(s, w->pidfd, w->token, retry_ms);
    return;
  }
  if (!MoveTo(w, Life::kReaped)) return;
  // The exit's time: the keeper may have seen it while this thread was busy.
  w->exit.exited_at_ms = monotonic_ms_exact();
  if (w->ending != nullptr) {
    double seen = w->ending->record().exited_at_ms;
    if (seen > 0 && seen < w->exit.exited_at_ms) w->exit.exited_at_ms = seen;
  }
  CloseReapedPidfd(w);
  bool leader_reported = false;
  if (r > 0 && w->start_status_fd >= 0) {
    w->start_error =
        read_start_status(w->start_status_fd, &w->start_failure, &w->exit, &leader_reported);
  }
  if (r > 0) ApplyLeaderExit(w, leader_reported);
  StopWatchingLeader(w);
  // Nobody will report this child's exit, or JavaScript asked not to wait for
  // whoever still holds the pipes: the output ends here.
  if (r < 0) w->reap_error = r;
  if (r < 0 || w->end_capture_at_exit) EndCapture(w);
  UpdateHold(w);
  if (!w->cgroup.path.empty()) {
    EndTree(w);  // the exit is queued once the tree is gone
    return;
  }
  QueueCallbacks(w);
}

// Must run while the env is alive. Raw calls: a failure here (a terminating
// env) must not become a fatal error.
void Detach(Watch* w, Life to) {
  MoveTo(w, to);
  if (w->ending != nullptr) w->ending->cancel();
  UpdateHold(w);
  if (w->handle != nullptr) {
    DetachHandle(w->handle);
    w->handle = nullptr;
  }
  napi_env env = w->state->env;
  if (w->on_exit != nullptr) napi_delete_reference(env, w->on_exit);
  if (w->on_overflow != nullptr) napi_delete_reference(env, w->on_overflow);
  if (w->handle_ref != nullptr) napi_delete_reference(env, w->handle_ref);
  w->on_exit = nullptr;
  w->on_overflow = nullptr;
  w->handle_ref = nullptr;
}

void InitChildWatch(Napi::Env env, Napi::Object exports) {
  EnvState* state = new EnvState();
  state->env = env;
  // The environment owns the state before anything below can throw (a
  // terminating worker, exports that refuse a property): its finalizer
  // frees it, with no teardown hook to wait for until one is registered.
  state->hook_done = true;
  if (napi_set_instance_data(
          env, state,
          [](napi_env raw, void* data, void*) {
            FinalizeState(Napi::Env(raw), static_cast<EnvState*>(data));
          },
          nullptr) != napi_ok) {
    delete state;
    throw Napi::Error::New(env, "exactspawn: could not attach the exit watch to the environment");
  }
  if (InitWatchEvents(env, state) != napi_ok) {
    throw Napi::Error::New(env,
                           "exactspawn: could not create the exit watch's thread-safe function");
  }
  // Registered after the thread-safe function, so it runs before that
  // function's own teardown (cleanup hooks run in reverse order).
  if (napi_add_env_cleanup_hook(env, OnTeardown, state) != napi_ok) {
    throw Napi::Error::New(env, "exactspawn: could not register the teardown hook");
  }
  state->hook_done = false;
  Napi::Function ctor = DefineChildHandle(env);
  napi_create_reference(env, ctor, 1, &state->handle_ctor);
  exports.Set("ChildHandle", ctor);
  exports.Set("useHostLoop", Napi::Function::New(env, UseHostLoop, "useHostLoop"));
}

Napi::Object WatchChild(Napi::Env env, pid_t pid, Napi::Function on_exit,
                        const CaptureRequest& capture, std::vector<int>* parent_ends,
                        bool guard_group, StartReport* start, const DeadlinePlan* deadline,
                        StepCgroup* cgroup, bool positional, int pidfd) {
  EnvState* s = env.GetInstanceData<EnvState>();
  if (guard_group) {
    StepFailure guard_failure;
    if (watchdog_guard(pid, &guard_failure) < 0) AbandonChild(env, pid, pidfd, guard_failure);
  }
  if (pidfd < 0) pidfd = open_pidfd(pid);
  if (pidfd < 0) AbandonChild(env, pid, -1, {pidfd, "pidfd_open", "watch"});
  // The environment is being torn down: no watch can start (no call failed).
  if (s == nullptr || s->tearing_down)
    AbandonChild(env, pid, pidfd, {-ECANCELED, nullptr, "watch"});
  const char* failed_call = "";
  int err = StartWatchEvents(s, &failed_call);
  if (err < 0) AbandonChild(env, pid, pidfd, {err, failed_call, "watch"});

  Napi::Object object;
  std::shared_ptr<LeaderTarget> leader;
  std::shared_ptr<RunEnding> ending;
  std::shared_ptr<TreeTarget> tree;
  try {
    // Not make_shared: its control block needs GLIBCXX_3.4.26 (the prebuild's ceiling is 3.4.21).
    leader.reset(new LeaderTarget(pid, deadline != nullptr && deadline->to_group));
    std::shared_ptr<KillTarget> target = leader;
    if (cgroup != nullptr && !cgroup->path.empty()) {
      tree.reset(new TreeTarget(leader, cgroup->path));
      target = tree;
    }
    if (deadline != nullptr) ending.reset(new RunEnding(target, *deadline));
    napi_value ctor_value;
    napi_get_reference_value(env, s->handle_ctor, &ctor_value);
    object = Napi::Function(env, ctor_value).New({});
    if (!capture.slots.empty() && s->scratch == nullptr) {
      s->scratch = std::make_unique<char[]>(kReadChunk);
    }
  } catch (const Napi::Error&) {
    // Building the handle object failed in JavaScript: that error is the report.
    EndChild(pid, pidfd);
    throw;
  } catch (const std::bad_alloc&) {
    AbandonChild(env, pid, pidfd, {-ENOMEM, nullptr, "watch"});
  }

  Watch* w = new Watch();
  w->state = s;
  w->pid = pid;
  w->limit = capture.limit;
  w->guarded = guard_group;
  w->positional = positional;
  w->leader = std::move(leader);
  w->ending = std::move(ending);
  err = WatchFd(w, nullptr, pidfd, &w->token);
  if (err != 0) {
    delete w;
    AbandonChild(env, pid, pidfd, {err, "epoll_ctl", "watch"});
  }
  w->pidfd = pidfd;
  w->next = s->head;
  if (s->head != nullptr) s->head->prev = w;
  s->head = w;
  s->live++;
  for (int slot : capture.slots) {
    Reader* r;
    try {
      w->readers.push_back(std::make_unique<Reader>());
      r = w->readers.back().get();
    } catch (const std::bad_alloc&) {
      AbandonWatch(env, w, {-ENOMEM, nullptr, "capture"});
    }
    r->watch = w;
    r->slot = slot;
    r->fd = (*parent_ends)[static_cast<size_t>(slot)];
    err = StartReader(w, r);
    if (err != 0) AbandonWatch(env, w, {err, "epoll_ctl", "capture"});
  }

  if (w->ending != nullptr) {
    err = w->ending->arm(&failed_call);
    if (err != 0) AbandonWatch(env, w, {err, failed_call, "deadline"});
  }

  // Nothing below throws: the watch owns the captured read ends from here on.
  MoveTo(w, Life::kWatching);
  if (start != nullptr && start->leader_pidfd >= 0) {
    WatchLeader(w, start->leader_pidfd);
    start->leader_pidfd = -1;
  }
  if (start != nullptr && start->fd >= 0) {
    w->start_status_fd = start->fd;
    start->fd = -1;
    w->start_file.swap(start->file);
    w->start_cwd.swap(start->cwd);
  }
  for (int slot : capture.slots) (*parent_ends)[static_cast<size_t>(slot)] = -1;
  if (cgroup != nullptr && !cgroup->path.empty()) {
    w->cgroup = *cgroup;
    *cgroup = StepCgroup();
    w->tree = std::move(tree);
  }
  AttachHandle(object, w);
  napi_create_reference(env, on_exit, 1, &w->on_exit);
  if (capture.on_overflow != nullptr) {
    napi_create_reference(env, capture.on_overflow, 1, &w->on_overflow);
  }
  napi_create_reference(env, object, 1, &w->handle_ref);
  UpdateHold(w);
  return object;
}

}  // namespace exactspawn
