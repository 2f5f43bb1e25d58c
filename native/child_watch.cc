// child_watch.cc — the exit watch (see child_watch.h): one pidfd per child,
// polled on the environment's loop; reaped on its first readable event; the
// per-environment state and its teardown. Pipe capture lives in
// pipe_capture.cc, the JS conversion in exit_delivery.cc, the JS handle in
// child_handle.cc.
#include "child_watch.h"

#include <signal.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <memory>
#include <new>

#include "core/child_exit.h"
#include "core/orphan_reaper.h"
#include "core/watchdog.h"
#include "system_error.h"
#include "watch_state.h"

namespace exactspawn {

namespace {

void MaybeDelete(EnvState* state) {
  if (state->env_gone && state->live == 0 && state->hook == nullptr) delete state;
}

void Unlink(Watch* w) {
  EnvState* s = w->state;
  if (w->prev != nullptr) w->prev->next = w->next;
  if (w->next != nullptr) w->next->prev = w->prev;
  if (s->head == w) s->head = w->next;
}

void OnPidfdClose(uv_handle_t* handle) {
  Watch* w = static_cast<Watch*>(handle->data);
  if (w->pidfd >= 0) close(w->pidfd);
  w->pidfd = -1;
  w->open_handles--;
  MaybeFree(w);
}

void OnPidfdReadable(uv_poll_t* poll, int /*status*/, int /*events*/) {
  Watch* w = static_cast<Watch*>(poll->data);
  if (w->closing || w->reaped) return;
  if (w->guarded) {
    if (!child_has_exited(w->pid)) return;
    watchdog_release(w->pid);  // before the reap: afterwards the group id may be reused
    w->guarded = false;
  }
  // The leader has exited and is not reaped yet: its zombie still pins the
  // group id, so this is the last moment the rest of the group can be
  // signalled by number without reaching a stranger.
  if (w->group_exit_signal != 0) signal_group(w->pid, w->group_exit_signal);
  int r = reap_child(w->pid, &w->exit);
  if (r == 0) return;  // not a zombie yet; the pidfd will be readable again
  uv_poll_stop(poll);
  w->reaped = true;
  if (r > 0 && w->start_status_fd >= 0) {
    w->start_error = read_start_status(w->start_status_fd, &w->start_failure);
  }
  // Nobody will report this child's exit, or JavaScript asked not to wait for
  // whoever still holds the pipes: the output ends here.
  if (r < 0) w->reap_error = r;
  if (r < 0 || w->end_capture_at_exit) EndCapture(w);
  ClosePidfdPoll(w);
  MaybeDeliver(w);
}

// Environment teardown (worker exit, process exit): stop every watch without
// calling into JavaScript; a child that is still running keeps running and
// is handed to the orphan reaper so it never stays a zombie.
void OnTeardown(napi_async_cleanup_hook_handle handle, void* arg) {
  EnvState* s = static_cast<EnvState*>(arg);
  s->hook = handle;
  s->tearing_down = true;
  // MaybeFree cannot run here (every close callback is still pending), so
  // the list stays intact while it is walked.
  for (Watch* w = s->head; w != nullptr; w = w->next) {
    if (w->delivered) continue;
    EndCapture(w);
    if (!w->reaped && !w->closing) {
      uv_poll_stop(&w->poll);
      // A child that must not outlive its host ends with the environment that started it.
      if (w->guarded) watchdog_fire(w->pid);
      w->guarded = false;
      ChildExit exit;
      if (reap_child(w->pid, &exit) == 0 && hand_to_orphan_reaper(w->pid, w->pidfd) == 0) {
        w->pidfd = -1;  // the reaper owns it now
      }
    }
    Detach(w);
    ClosePidfdPoll(w);
  }
  if (s->live == 0) {
    napi_remove_async_cleanup_hook(handle);
    s->hook = nullptr;
  }
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

// Undoes a half-built watch: the handles close (freeing it), the pidfd and
// the pipe fds stay with the caller.
[[noreturn]] void AbandonWatch(Napi::Env env, Watch* w, const StepFailure& failure) {
  int pidfd = w->pidfd;
  w->pidfd = -1;
  for (auto& r : w->readers) {
    r->fd = -1;
    StopReader(r.get(), false);
  }
  Detach(w);
  ClosePidfdPoll(w);
  AbandonChild(env, w->pid, pidfd, failure);
}

}  // namespace

// Frees the watch once JavaScript is detached and every handle has closed.
void MaybeFree(Watch* w) {
  if (!w->delivered || w->open_handles > 0) return;
  EnvState* s = w->state;
  if (w->pidfd >= 0) close(w->pidfd);
  if (w->start_status_fd >= 0) close(w->start_status_fd);
  Unlink(w);
  delete w;
  s->live--;
  if (s->live == 0 && s->tearing_down && s->hook != nullptr) {
    napi_remove_async_cleanup_hook(s->hook);
    s->hook = nullptr;
  }
  MaybeDelete(s);
}

void ClosePidfdPoll(Watch* w) {
  if (w->closing) return;
  w->closing = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&w->poll), OnPidfdClose);
}

// Must run while the env is alive. Raw calls: a failure here (a terminating
// env) must not become a fatal error.
void Detach(Watch* w) {
  w->delivered = true;
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
  if (napi_get_uv_event_loop(env, &state->loop) != napi_ok) {
    delete state;
    throw Napi::Error::New(env, "exactspawn: no event loop for this environment");
  }
  Napi::Function ctor = DefineChildHandle(env);
  napi_create_reference(env, ctor, 1, &state->handle_ctor);
  exports.Set("ChildHandle", ctor);
  env.SetInstanceData<EnvState, FinalizeState>(state);
  if (napi_add_async_cleanup_hook(env, OnTeardown, state, &state->hook) != napi_ok) {
    throw Napi::Error::New(env, "exactspawn: could not register the teardown hook");
  }
}

Napi::Object WatchChild(Napi::Env env, pid_t pid, Napi::Function on_exit,
                        const CaptureRequest& capture, std::vector<int>* parent_ends,
                        bool guard_group, StartReport* start) {
  EnvState* s = env.GetInstanceData<EnvState>();
  if (guard_group) {
    StepFailure guard_failure;
    if (watchdog_guard(pid, &guard_failure) < 0) AbandonChild(env, pid, -1, guard_failure);
  }
  int pidfd = open_pidfd(pid);
  if (pidfd < 0) AbandonChild(env, pid, -1, {pidfd, "pidfd_open", "watch"});
  // The environment is being torn down: no watch can start (no call failed).
  if (s == nullptr || s->tearing_down)
    AbandonChild(env, pid, pidfd, {-ECANCELED, nullptr, "watch"});

  Napi::Object object;
  try {
    napi_value ctor_value;
    napi_get_reference_value(env, s->handle_ctor, &ctor_value);
    object = Napi::Function(env, ctor_value).New({});
    object.Set("pid", Napi::Number::New(env, pid));
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
  w->pidfd = pidfd;
  w->limit = capture.limit;
  w->guarded = guard_group;
  w->delivered = true;  // until the JS side is attached below: a failure frees without JS
  int err = uv_poll_init(s->loop, &w->poll, pidfd);
  if (err != 0) {
    delete w;
    AbandonChild(env, pid, pidfd, {err, "uv_poll_init", "watch"});
  }
  w->poll.data = w;
  w->open_handles = 1;
  // Linked as soon as the handle exists so the close callback's bookkeeping holds.
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
    if (err != 0) {
      AbandonWatch(env, w, {err, r->active ? "uv_poll_start" : "uv_poll_init", "capture"});
    }
  }
  err = uv_poll_start(&w->poll, UV_READABLE, OnPidfdReadable);
  if (err != 0) AbandonWatch(env, w, {err, "uv_poll_start", "watch"});

  // Nothing below throws: the watch owns the captured read ends from here on.
  w->delivered = false;
  if (start != nullptr && start->fd >= 0) {
    w->start_status_fd = start->fd;
    start->fd = -1;
    w->start_file.swap(start->file);
    w->start_cwd.swap(start->cwd);
  }
  for (int slot : capture.slots) (*parent_ends)[static_cast<size_t>(slot)] = -1;
  AttachHandle(object, w);
  napi_create_reference(env, on_exit, 1, &w->on_exit);
  if (capture.on_overflow != nullptr) {
    napi_create_reference(env, capture.on_overflow, 1, &w->on_overflow);
  }
  napi_create_reference(env, object, 1, &w->handle_ref);
  return object;
}

}  // namespace exactspawn
