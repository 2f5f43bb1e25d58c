// watch_events.cc — how the exit watch hears about its fds: every pidfd and
// captured pipe of an environment sits in its EventSet (core/event_set.h),
// and one of two waiters reports the set's readiness on the environment's
// thread, where the ready tokens are looked up and handed to the pidfd watch
// (child_watch.cc) or the pipe capture (pipe_capture.cc):
//   - the host's own loop (host_loop.h): one uv_poll on the set's epoll fd,
//     when JavaScript asked for it (useHostLoop, Node only) and the host
//     exports libuv. An exit costs no thread switch.
//   - a thread of the set's own, blocking in epoll_wait, whose batches one
//     thread-safe function (napi_create_threadsafe_function) carries over:
//     only Node-API, which Node, Bun and Deno all implement.
// The choice is made once, at the first watch.
//
// Keeping the host alive: the loop's poll (uv_ref/uv_unref), or the
// thread-safe function (napi_ref_threadsafe_function /
// napi_unref_threadsafe_function), is ref'd exactly while some watch holds
// (a ref'd child not reaped yet, or its capture still read), so a host with
// only unref'd children may exit, as with child_process.
#include <cerrno>
#include <new>

#include "debug_binding.h"
#include "host_loop.h"
#include "watch_state.h"

namespace exactspawn {

// The host's loop polling an environment's event set. Freed by its close
// callback; `state` is cleared when the environment's teardown begins.
struct LoopWaiter {
  uv_poll_t poll;
  EnvState* state = nullptr;
  napi_async_cleanup_hook_handle hook = nullptr;
};

namespace {

// On the environment's thread: hands every ready token to its owner (no
// JavaScript runs), then runs the callbacks that queued (collect, then call
// back: exit_delivery.cc).
void Dispatch(EnvState* s) {
  s->in_pass = true;
  std::vector<uint64_t> batch;
  batch.swap(s->spare_batch);
  batch.clear();
  try {
    s->events.take(&batch);
  } catch (const std::bad_alloc&) {
    batch.clear();  // left queued; the next report takes them
  }
  for (uint64_t token : batch) {
    auto found = s->sources.find(token);
    if (found == s->sources.end()) continue;  // unregistered after the event was collected
    Source source = found->second;
    if (source.reader != nullptr) {
      OnPipeReady(source.reader);
    } else if (source.tree) {
      OnTreeReady(source.watch);
    } else if (source.leader) {
      OnLeaderReady(source.watch);
    } else {
      OnPidfdReady(source.watch);
    }
  }
  batch.clear();
  batch.swap(s->spare_batch);
  RunQueuedCallbacks(s);
  s->in_pass = false;
}

// On the event thread: ask for a call on the environment's thread. At most
// one is outstanding (EventSet only notifies again after take()). A call
// Node-API refused (no memory for its queue entry) is made again by the set
// a little later: the environment never stops hearing of exits.
bool NotifyFromThread(void* arg) {
  EnvState* s = static_cast<EnvState*>(arg);
  napi_status status = DebugRefuseNotify() ? napi_generic_failure
                                           : napi_call_threadsafe_function(s->events_to_js, nullptr,
                                                                           napi_tsfn_nonblocking);
  // napi_closing once the environment is going: its teardown hook stops this thread.
  return status == napi_ok || status == napi_closing;
}

// On the environment's thread (the thread-safe function's call): a batch
// the thread collected, or a pass RequestPass asked for.
void DispatchBatch(napi_env env, napi_value /*js_callback*/, void* context, void* /*data*/) {
  EnvState* s = static_cast<EnvState*>(context);
  if (env == nullptr || s->tearing_down) return;
  s->pass_requested = false;
  Dispatch(s);
}

// The host's loop found the set's epoll fd readable.
void OnLoopReadable(uv_poll_t* poll, int /*status*/, int /*events*/) {
  EnvState* s = static_cast<LoopWaiter*>(poll->data)->state;
  if (s == nullptr || s->tearing_down) return;
  s->events.collect(0);
  Dispatch(s);
}

void OnLoopClosed(uv_handle_t* handle) {
  LoopWaiter* waiter = static_cast<LoopWaiter*>(handle->data);
  if (waiter->hook != nullptr) napi_remove_async_cleanup_hook(waiter->hook);
  delete waiter;
}

// Environment teardown, before the plain hook (child_watch.cc: hooks run in
// the reverse order of their registration): the poll is closed, and Node
// keeps the environment's loop running until its close callback has run.
void OnLoopTeardown(napi_async_cleanup_hook_handle hook, void* arg) {
  LoopWaiter* waiter = static_cast<LoopWaiter*>(arg);
  waiter->hook = hook;
  if (waiter->state != nullptr) waiter->state->loop_waiter = nullptr;
  waiter->state = nullptr;
  HostLoop()->close(reinterpret_cast<uv_handle_t*>(&waiter->poll), OnLoopClosed);
}

// Makes the host's loop wait for the set; false when it cannot (the thread
// is used instead).
bool StartLoopWaiter(EnvState* s) {
  const HostLoopApi* uv = HostLoop();
  uv_loop_s* loop = nullptr;
  if (uv == nullptr || uv->get_uv_event_loop(s->env, &loop) != napi_ok || loop == nullptr) {
    return false;
  }
  LoopWaiter* waiter = new (std::nothrow) LoopWaiter();
  if (waiter == nullptr) return false;
  if (uv->poll_init(loop, &waiter->poll, s->events.fd()) != 0) {
    delete waiter;
    return false;
  }
  waiter->poll.data = waiter;
  auto* handle = reinterpret_cast<uv_handle_t*>(&waiter->poll);
  if (uv->poll_start(&waiter->poll, UV_READABLE, OnLoopReadable) != 0 ||
      napi_add_async_cleanup_hook(s->env, OnLoopTeardown, waiter, nullptr) != napi_ok) {
    uv->close(handle, OnLoopClosed);
    return false;
  }
  if (s->holds == 0) uv->unref(handle);
  waiter->state = s;
  s->loop_waiter = waiter;
  return true;
}

// What keeps the host's loop alive while a watch holds.
void SetLoopRef(EnvState* s, bool on) {
  if (s->loop_waiter != nullptr) {
    auto* handle = reinterpret_cast<uv_handle_t*>(&s->loop_waiter->poll);
    on ? HostLoop()->ref(handle) : HostLoop()->unref(handle);
  } else if (on) {
    napi_ref_threadsafe_function(s->env, s->events_to_js);
  } else {
    napi_unref_threadsafe_function(s->env, s->events_to_js);
  }
}

}  // namespace

napi_status InitWatchEvents(napi_env env, EnvState* s) {
  napi_value name;
  napi_status status =
      napi_create_string_utf8(env, "exactspawn:exit-watch", NAPI_AUTO_LENGTH, &name);
  if (status != napi_ok) return status;
  status = napi_create_threadsafe_function(env, nullptr, nullptr, name, 0, 1, nullptr, nullptr, s,
                                           DispatchBatch, &s->events_to_js);
  if (status != napi_ok) return status;
  return napi_unref_threadsafe_function(env, s->events_to_js);
}

int StartWatchEvents(EnvState* s, const char** failed_call) {
  if (s->loop_waiter != nullptr || s->events.thread_started()) return 0;
  int err = s->events.open();
  if (err == 0 && s->host_loop_wanted && StartLoopWaiter(s)) return 0;
  if (err == 0) err = s->events.start_thread(NotifyFromThread, s);
  if (err < 0) *failed_call = s->events.failed_call();
  return err;
}

void StopWatchEvents(EnvState* s) {
  s->events.stop_thread();
  if (s->loop_waiter != nullptr) {  // its own teardown hook has not run: it closes the poll
    HostLoop()->poll_stop(&s->loop_waiter->poll);
    s->loop_waiter->state = nullptr;
    s->loop_waiter = nullptr;
  }
}

Napi::Value UseHostLoop(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsBoolean()) {
    throw Napi::TypeError::New(env, "useHostLoop(wanted): wanted must be a boolean");
  }
  EnvState* s = env.GetInstanceData<EnvState>();
  bool started = s->loop_waiter != nullptr || s->events.thread_started();
  if (!started) s->host_loop_wanted = info[0].As<Napi::Boolean>().Value() && HostLoop() != nullptr;
  bool loop = started ? s->loop_waiter != nullptr : s->host_loop_wanted;
  return Napi::String::New(env, loop ? "host-loop" : "thread");
}

namespace {

// Registers one source of events of the watch with the event set: a
// captured pipe (reader), the leader's pidfd, or the step cgroup's
// cgroup.events (priority: POLLPRI). *token names it in later events.
int AddSource(Watch* w, Source source, int fd, bool priority, uint64_t* token) {
  EnvState* s = w->state;
  uint64_t id = s->next_token++;
  try {
    s->sources.emplace(id, source);
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  }
  int err = priority ? s->events.add_priority(fd, id) : s->events.add(fd, id);
  if (err < 0) {
    s->sources.erase(id);
    return err;
  }
  *token = id;
  return 0;
}

}  // namespace

int WatchFd(Watch* w, Reader* r, int fd, uint64_t* token) {
  return AddSource(w, Source{w, r}, fd, false, token);
}

int WatchLeaderFd(Watch* w, int fd, uint64_t* token) {
  return AddSource(w, Source{w, nullptr, false, true}, fd, false, token);
}

int WatchTreeFd(Watch* w, int fd, uint64_t* token) {
  return AddSource(w, Source{w, nullptr, true}, fd, true, token);
}

void RearmTreeFd(EnvState* s, int fd, uint64_t token) {
  if (s->events.rearm_priority(fd, token) < 0) s->events.retry_after(token, 10);
}

void RearmFd(EnvState* s, int fd, uint64_t token) {
  // Should the kernel refuse (ENOMEM), the owner is asked again a little later.
  if (s->events.rearm(fd, token) < 0) s->events.retry_after(token, 10);
}

void RetryFd(EnvState* s, int fd, uint64_t token, int delay_ms) {
  // Without memory for the timer, the fd itself reports again (at once).
  if (s->events.retry_after(token, delay_ms) < 0) RearmFd(s, fd, token);
}

void ForgetFd(EnvState* s, uint64_t* token) {
  if (*token == 0) return;
  s->sources.erase(*token);
  *token = 0;
}

void UnwatchFd(EnvState* s, int fd, uint64_t* token) {
  if (*token == 0) return;
  s->events.remove(fd);
  s->sources.erase(*token);
  *token = 0;
}

void RequestPass(EnvState* s) {
  if (s->pass_requested || s->tearing_down) return;
  // From this thread too: the call is queued and runs on a later loop turn.
  // napi_closing once the environment is going (nothing more is delivered then).
  s->pass_requested =
      napi_call_threadsafe_function(s->events_to_js, nullptr, napi_tsfn_nonblocking) == napi_ok;
}

bool Holds(const Watch* w) { return w->holding; }

void UpdateHold(Watch* w) {
  EnvState* s = w->state;
  bool capturing = false;
  for (auto& r : w->readers) capturing = capturing || r->active;
  bool want = w->ref && !s->tearing_down &&
              (w->life == Life::kWatching ||
               (w->life == Life::kReaped && (capturing || w->due || w->tree_pending)));
  if (want == w->holding) return;
  w->holding = want;
  if (want) {
    if (s->holds++ == 0) SetLoopRef(s, true);
  } else if (--s->holds == 0 && !s->tearing_down) {
    SetLoopRef(s, false);
  }
}

}  // namespace exactspawn
