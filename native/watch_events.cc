// watch_events.cc — how the exit watch hears about its fds without libuv:
// the environment's EventThread (core/event_thread.h) waits for the pidfds
// and captured pipes on its own thread, and one thread-safe function
// (napi_create_threadsafe_function) carries each batch of ready tokens onto
// the environment's thread, where they are looked up and handed to the
// pidfd watch (child_watch.cc) or the pipe capture (pipe_capture.cc). Node,
// Bun and Deno all implement that much of Node-API.
//
// Keeping the host alive: the thread-safe function is ref'd exactly while
// some watch holds (a ref'd child not reaped yet, or its capture still
// read), napi_ref_threadsafe_function / napi_unref_threadsafe_function, so
// a host with only unref'd children may exit, as with child_process.
#include <cerrno>
#include <new>

#include "watch_state.h"

namespace exactspawn {

namespace {

// On the event thread: ask for a call on the environment's thread. At most
// one is outstanding (EventThread only notifies again after take()).
void NotifyFromThread(void* arg) {
  EnvState* s = static_cast<EnvState*>(arg);
  // napi_closing once the environment is going: its teardown hook stops this thread.
  napi_call_threadsafe_function(s->events_to_js, nullptr, napi_tsfn_nonblocking);
}

// On the environment's thread.
void DispatchBatch(napi_env env, napi_value /*js_callback*/, void* context, void* /*data*/) {
  EnvState* s = static_cast<EnvState*>(context);
  if (env == nullptr || s->tearing_down) return;
  std::vector<uint64_t> batch;
  batch.swap(s->spare_batch);
  batch.clear();
  try {
    s->events.take(&batch);
  } catch (const std::bad_alloc&) {
    return;  // left queued; the next report takes them
  }
  for (uint64_t token : batch) {
    auto found = s->sources.find(token);
    if (found == s->sources.end()) continue;  // unregistered after the event was collected
    Source source = found->second;
    if (source.reader != nullptr) {
      OnPipeReady(source.reader);
    } else {
      OnPidfdReady(source.watch);
    }
  }
  batch.swap(s->spare_batch);
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
  if (s->events.started()) return 0;
  int err = s->events.start(NotifyFromThread, s);
  if (err < 0) *failed_call = s->events.failed_call();
  return err;
}

int WatchFd(Watch* w, Reader* r, int fd, uint64_t* token) {
  EnvState* s = w->state;
  uint64_t id = s->next_token++;
  try {
    s->sources.emplace(id, Source{w, r});
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  }
  int err = s->events.add(fd, id);
  if (err < 0) {
    s->sources.erase(id);
    return err;
  }
  *token = id;
  return 0;
}

void RearmFd(EnvState* s, int fd, uint64_t token) {
  // Should the kernel refuse (ENOMEM), the owner is asked again a little later.
  if (s->events.rearm(fd, token) < 0) s->events.retry_after(token, 10);
}

void RetryFd(EnvState* s, int fd, uint64_t token, int delay_ms) {
  // Without memory for the timer, the fd itself reports again (at once).
  if (s->events.retry_after(token, delay_ms) < 0) RearmFd(s, fd, token);
}

void UnwatchFd(EnvState* s, int fd, uint64_t* token) {
  if (*token == 0) return;
  s->events.remove(fd);
  s->sources.erase(*token);
  *token = 0;
}

bool Holds(const Watch* w) { return w->holding; }

void UpdateHold(Watch* w) {
  EnvState* s = w->state;
  bool capturing = false;
  for (auto& r : w->readers) capturing = capturing || r->active;
  bool want = w->ref && !s->tearing_down &&
              (w->life == Life::kWatching || (w->life == Life::kReaped && capturing));
  if (want == w->holding) return;
  w->holding = want;
  if (want) {
    if (s->holds++ == 0) napi_ref_threadsafe_function(s->env, s->events_to_js);
  } else if (--s->holds == 0 && !s->tearing_down) {
    napi_unref_threadsafe_function(s->env, s->events_to_js);
  }
}

}  // namespace exactspawn
