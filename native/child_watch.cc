// child_watch.cc — see child_watch.h.
#include "child_watch.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cmath>
#include <memory>
#include <new>
#include <string>

#include "core/child_exit.h"
#include "core/orphan_reaper.h"
#include "core/pipe.h"
#include "core/signal_names.h"
#include "core/watchdog.h"
#include "system_error.h"

namespace exactspawn {

namespace {

class ChildHandle;
struct EnvState;
struct Watch;

// One captured pipe: the parent's read end, polled and read by the addon.
struct Reader {
  uv_poll_t poll;
  Watch* watch = nullptr;
  int slot = 0;
  int fd = -1;          // owned while >= 0: closed at the end, or handed to JavaScript
  bool active = false;  // the poll handle is initialised and not closed
  bool taken = false;   // handed to JavaScript by takeOver()
  std::string bytes;    // at most the watch's limit
};

struct Watch {
  uv_poll_t poll;  // the pidfd
  EnvState* state = nullptr;
  pid_t pid = 0;
  int pidfd = -1;
  bool closing = false;    // the pidfd poll has been closed
  bool reaped = false;     // exit (or reap_error) is known
  bool delivered = false;  // the JS side is detached (exit delivered, or never will be)
  bool guarded = false;    // its group is registered with the watchdog (released before the reap)
  int reap_error = 0;
  ChildExit exit;
  int open_handles = 0;  // uv handles whose close callback has not run yet
  size_t limit = 0;
  std::vector<std::unique_ptr<Reader>> readers;
  ChildHandle* handle = nullptr;
  napi_ref on_exit = nullptr;
  napi_ref on_overflow = nullptr;
  napi_ref handle_ref = nullptr;  // keeps the JS handle alive until the exit is delivered
  Watch* prev = nullptr;
  Watch* next = nullptr;
};

// Bytes read per read(2), and reads per readable event (so one chatty child
// cannot hold the loop: the poll is level-triggered and fires again).
constexpr size_t kReadChunk = 64 * 1024;
constexpr int kReadsPerEvent = 16;

struct EnvState {
  napi_env env = nullptr;
  uv_loop_t* loop = nullptr;
  napi_ref handle_ctor = nullptr;  // deleted by FinalizeState (valgrind: 40 bytes per env)
  napi_async_cleanup_hook_handle hook = nullptr;
  bool tearing_down = false;
  bool env_gone = false;
  Watch* head = nullptr;
  size_t live = 0;
  std::unique_ptr<char[]> scratch;  // kReadChunk bytes, allocated on the first capture
};

void MaybeDelete(EnvState* state) {
  if (state->env_gone && state->live == 0 && state->hook == nullptr) delete state;
}

void Unlink(Watch* w) {
  EnvState* s = w->state;
  if (w->prev != nullptr) w->prev->next = w->next;
  if (w->next != nullptr) w->next->prev = w->prev;
  if (s->head == w) s->head = w->next;
}

// Frees the watch once JavaScript is detached and every handle has closed.
void MaybeFree(Watch* w) {
  if (!w->delivered || w->open_handles > 0) return;
  EnvState* s = w->state;
  if (w->pidfd >= 0) close(w->pidfd);
  Unlink(w);
  delete w;
  s->live--;
  if (s->live == 0 && s->tearing_down && s->hook != nullptr) {
    napi_remove_async_cleanup_hook(s->hook);
    s->hook = nullptr;
  }
  MaybeDelete(s);
}

void OnPidfdClose(uv_handle_t* handle) {
  Watch* w = static_cast<Watch*>(handle->data);
  if (w->pidfd >= 0) close(w->pidfd);
  w->pidfd = -1;
  w->open_handles--;
  MaybeFree(w);
}

void OnReaderClose(uv_handle_t* handle) {
  Watch* w = static_cast<Reader*>(handle->data)->watch;
  w->open_handles--;
  MaybeFree(w);
}

void ClosePidfdPoll(Watch* w) {
  if (w->closing) return;
  w->closing = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&w->poll), OnPidfdClose);
}

// Stops reading. uv_close unregisters the fd synchronously, so closing the fd
// right after cannot unregister a reused fd number.
void StopReader(Reader* r, bool close_fd_too) {
  if (r->active) {
    r->active = false;
    uv_close(reinterpret_cast<uv_handle_t*>(&r->poll), OnReaderClose);
  }
  if (close_fd_too && r->fd >= 0) {
    close_fd(r->fd);
    r->fd = -1;
  }
}

class ChildHandle : public Napi::ObjectWrap<ChildHandle> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "ChildHandle",
        {InstanceMethod<&ChildHandle::Kill>("kill"),
         InstanceMethod<&ChildHandle::KillGroup>("killGroup"),
         InstanceMethod<&ChildHandle::Ref>("ref"), InstanceMethod<&ChildHandle::Unref>("unref"),
         InstanceMethod<&ChildHandle::HasRef>("hasRef"),
         InstanceMethod<&ChildHandle::TakeOver>("takeOver")});
  }

  explicit ChildHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ChildHandle>(info) {}

  Watch* watch = nullptr;  // null once the exit has been delivered or the env torn down
  pid_t pid = 0;

 private:
  static int SignalArg(const Napi::CallbackInfo& info) {
    if (info.Length() < 1 || !info[0].IsNumber()) {
      ThrowTypeError(info.Env(), "kill: the signal must be a number");
    }
    double sig = info[0].As<Napi::Number>().DoubleValue();
    // Range first: converting NaN or an out-of-range double to int is undefined.
    if (!(sig >= 0 && sig <= 64) || sig != std::trunc(sig)) {
      ThrowTypeError(info.Env(), "kill: the signal must be an integer from 0 to 64");
    }
    return static_cast<int>(sig);
  }

  // Returns 0 or -errno; -ESRCH once the child has been reaped (its pid may be reused).
  Napi::Value Kill(const Napi::CallbackInfo& info) {
    int sig = SignalArg(info);
    int r = watch == nullptr || watch->reaped ? -ESRCH : signal_pidfd(watch->pidfd, sig);
    return Napi::Number::New(info.Env(), r);
  }

  // kill(-pid): the caller (TypeScript) only asks for groups it created.
  Napi::Value KillGroup(const Napi::CallbackInfo& info) {
    int sig = SignalArg(info);
    return Napi::Number::New(info.Env(), signal_group(pid, sig));
  }

  Napi::Value Ref(const Napi::CallbackInfo& info) {
    if (watch != nullptr) {
      if (!watch->closing) uv_ref(reinterpret_cast<uv_handle_t*>(&watch->poll));
      for (auto& r : watch->readers) {
        if (r->active) uv_ref(reinterpret_cast<uv_handle_t*>(&r->poll));
      }
    }
    return info.Env().Undefined();
  }

  Napi::Value Unref(const Napi::CallbackInfo& info) {
    if (watch != nullptr) {
      if (!watch->closing) uv_unref(reinterpret_cast<uv_handle_t*>(&watch->poll));
      for (auto& r : watch->readers) {
        if (r->active) uv_unref(reinterpret_cast<uv_handle_t*>(&r->poll));
      }
    }
    return info.Env().Undefined();
  }

  Napi::Value HasRef(const Napi::CallbackInfo& info) {
    bool has = false;
    if (watch != nullptr) {
      has = !watch->closing && uv_has_ref(reinterpret_cast<uv_handle_t*>(&watch->poll));
      for (auto& r : watch->readers) {
        if (r->active && uv_has_ref(reinterpret_cast<uv_handle_t*>(&r->poll))) has = true;
      }
    }
    return Napi::Boolean::New(info.Env(), has);
  }

  // takeOver(slot) → { fd, bytes } | null. Defined after the delivery code.
  Napi::Value TakeOver(const Napi::CallbackInfo& info);
};

// Detaches the JS side: the handle stops signalling, the references go.
// Must run while the env is alive. Raw calls: a failure here (a terminating
// env) must not become a fatal error.
void Detach(Watch* w) {
  w->delivered = true;
  if (w->handle != nullptr) {
    w->handle->watch = nullptr;
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

// Raw Node-API from here on: this runs from the event loop, possibly while a
// worker is being terminated, where node-addon-api would turn a refused call
// into a fatal error. Every failure only skips the JS notification.
bool SetNumber(napi_env env, napi_value object, const char* key, double number) {
  napi_value value;
  return napi_create_double(env, number, &value) == napi_ok &&
         napi_set_named_property(env, object, key, value) == napi_ok;
}

bool SetStringOrNull(napi_env env, napi_value object, const char* key, const char* text) {
  napi_value value;
  napi_status status = text == nullptr
                           ? napi_get_null(env, &value)
                           : napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &value);
  return status == napi_ok && napi_set_named_property(env, object, key, value) == napi_ok;
}

// A Buffer holding a copy of bytes; the string's memory is released.
bool BytesToJs(napi_env env, std::string* bytes, napi_value* out) {
  void* data = nullptr;
  napi_status status = napi_create_buffer_copy(env, bytes->size(), bytes->data(), &data, out);
  std::string().swap(*bytes);
  return status == napi_ok;
}

// output[slot] = Buffer for every captured pipe JavaScript did not take over.
bool OutputToJs(napi_env env, Watch* w, napi_value object) {
  int length = 0;
  for (auto& r : w->readers) length = r->slot + 1 > length ? r->slot + 1 : length;
  napi_value output;
  napi_value null_value;
  if (napi_create_array_with_length(env, static_cast<size_t>(length), &output) != napi_ok ||
      napi_get_null(env, &null_value) != napi_ok) {
    return false;
  }
  for (int i = 0; i < length; ++i) {
    if (napi_set_element(env, output, static_cast<uint32_t>(i), null_value) != napi_ok) {
      return false;
    }
  }
  for (auto& r : w->readers) {
    if (r->taken) continue;
    napi_value bytes;
    if (!BytesToJs(env, &r->bytes, &bytes) ||
        napi_set_element(env, output, static_cast<uint32_t>(r->slot), bytes) != napi_ok) {
      return false;
    }
  }
  return napi_set_named_property(env, object, "output", output) == napi_ok;
}

bool ExitToJs(napi_env env, Watch* w, napi_value* out) {
  const ChildExit& exit = w->exit;
  napi_value object;
  napi_value code;
  std::string name = exit.signal != 0 ? signal_name(exit.signal) : std::string();
  if (napi_create_object(env, &object) != napi_ok) return false;
  if (exit.exited) {
    if (napi_create_int32(env, exit.exit_code, &code) != napi_ok) return false;
  } else if (napi_get_null(env, &code) != napi_ok) {
    return false;
  }
  if (napi_set_named_property(env, object, "exitCode", code) != napi_ok ||
      !SetStringOrNull(env, object, "signal", exit.signal != 0 ? name.c_str() : nullptr) ||
      !SetNumber(env, object, "userCpuMicros", static_cast<double>(exit.user_cpu_micros)) ||
      !SetNumber(env, object, "systemCpuMicros", static_cast<double>(exit.system_cpu_micros))) {
    return false;
  }
  if (!w->readers.empty() && !OutputToJs(env, w, object)) return false;
  *out = object;
  return true;
}

// Someone else reaped our pid (waitpid(-1), or SIGCHLD set to SIG_IGN elsewhere).
bool ReapErrorToJs(napi_env env, int negative_errno, napi_value* out) {
  const char* code_name = strerrorname_np(-negative_errno);
  if (code_name == nullptr) code_name = "EIO";
  std::string message = std::string("wait4 ") + code_name;
  napi_value code;
  napi_value text;
  napi_value error;
  if (napi_create_string_utf8(env, code_name, NAPI_AUTO_LENGTH, &code) != napi_ok ||
      napi_create_string_utf8(env, message.c_str(), NAPI_AUTO_LENGTH, &text) != napi_ok ||
      napi_create_error(env, code, text, &error) != napi_ok ||
      !SetNumber(env, error, "errno", negative_errno) ||
      !SetStringOrNull(env, error, "syscall", "wait4")) {
    return false;
  }
  *out = error;
  return true;
}

// Calls fn(receiver, arg) as a top-level callback (nextTicks and microtasks
// drain afterwards; nested inside a JS call they wait for the outer one).
void CallJs(napi_env env, napi_value receiver, napi_value fn, napi_value arg) {
  napi_value ignored;
  if (napi_make_callback(env, nullptr, receiver, fn, 1, &arg, &ignored) == napi_pending_exception) {
    // The TypeScript callbacks never throw; this is a terminating worker.
    napi_value pending;
    napi_get_and_clear_last_exception(env, &pending);
  }
}

// Delivers the exit once the child is reaped and no captured pipe is still read.
void MaybeDeliver(Watch* w) {
  if (w->delivered || !w->reaped || w->state->tearing_down) return;
  for (auto& r : w->readers) {
    if (r->active) return;
  }
  napi_env env = w->state->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) {
    Detach(w);
    MaybeFree(w);
    return;
  }
  napi_value callback = nullptr;
  napi_value receiver = nullptr;
  napi_value result = nullptr;
  bool ready =
      napi_get_reference_value(env, w->on_exit, &callback) == napi_ok &&
      napi_get_reference_value(env, w->handle_ref, &receiver) == napi_ok && callback != nullptr &&
      receiver != nullptr &&
      (w->reap_error < 0 ? ReapErrorToJs(env, w->reap_error, &result) : ExitToJs(env, w, &result));
  Detach(w);
  if (ready) CallJs(env, receiver, callback, result);
  napi_close_handle_scope(env, scope);
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
  int r = reap_child(w->pid, &w->exit);
  if (r == 0) return;  // not a zombie yet; the pidfd will be readable again
  uv_poll_stop(poll);
  w->reaped = true;
  if (r < 0) {
    // Nobody will report this child's exit: stop reading its pipes too.
    w->reap_error = r;
    for (auto& reader : w->readers) StopReader(reader.get(), true);
  }
  ClosePidfdPoll(w);
  MaybeDeliver(w);
}

void NotifyOverflow(Watch* w, int slot) {
  if (w->delivered || w->on_overflow == nullptr || w->state->tearing_down) return;
  napi_env env = w->state->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value callback = nullptr;
  napi_value receiver = nullptr;
  napi_value arg = nullptr;
  if (napi_get_reference_value(env, w->on_overflow, &callback) == napi_ok &&
      napi_get_reference_value(env, w->handle_ref, &receiver) == napi_ok && callback != nullptr &&
      receiver != nullptr && napi_create_int32(env, slot, &arg) == napi_ok) {
    CallJs(env, receiver, callback, arg);
  }
  napi_close_handle_scope(env, scope);
}

void OnPipeReadable(uv_poll_t* poll, int status, int /*events*/) {
  Reader* r = static_cast<Reader*>(poll->data);
  Watch* w = r->watch;
  if (!r->active) return;
  char* scratch = w->state->scratch.get();
  bool ended = status < 0;
  bool overflowed = false;
  for (int i = 0; i < kReadsPerEvent && !ended; ++i) {
    long n = read_fd(r->fd, scratch, kReadChunk);
    if (n == -EAGAIN) break;
    if (n <= 0) {
      ended = true;  // EOF, or a read error: what arrived so far is the output
      break;
    }
    size_t room = w->limit - r->bytes.size();
    size_t keep = static_cast<size_t>(n) > room ? room : static_cast<size_t>(n);
    try {
      r->bytes.append(scratch, keep);
    } catch (const std::bad_alloc&) {
      ended = true;
      break;
    }
    if (keep < static_cast<size_t>(n)) {
      ended = overflowed = true;
    }
  }
  if (!ended) return;
  // Closing the read end makes further writes fail with EPIPE, as a destroyed stream would.
  StopReader(r, true);
  if (overflowed) NotifyOverflow(w, r->slot);
  MaybeDeliver(w);
}

Napi::Value ChildHandle::TakeOver(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) ThrowTypeError(env, "takeOver: expected a slot");
  double slot = info[0].As<Napi::Number>().DoubleValue();
  if (watch == nullptr) return env.Null();
  Watch* w = watch;
  Reader* r = nullptr;
  for (auto& candidate : w->readers) {
    if (!candidate->taken && static_cast<double>(candidate->slot) == slot) r = candidate.get();
  }
  if (r == nullptr) return env.Null();
  int fd = r->active ? r->fd : -1;
  if (r->active) r->fd = -1;  // JavaScript owns it now
  StopReader(r, false);
  r->taken = true;
  Napi::Object out = Napi::Object::New(env);
  out.Set("fd", Napi::Number::New(env, fd));
  out.Set("bytes", Napi::Buffer<char>::Copy(env, r->bytes.data(), r->bytes.size()));
  std::string().swap(r->bytes);
  MaybeDeliver(w);
  return out;
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
    for (auto& reader : w->readers) StopReader(reader.get(), true);
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

[[noreturn]] void AbandonChild(Napi::Env env, pid_t pid, int pidfd, int err, const char* syscall) {
  if (pidfd >= 0) close(pidfd);
  watchdog_fire(pid);  // a guarded group dies whole and is released before the reap
  kill(pid, SIGKILL);
  reap_child_blocking(pid);
  throw SystemError(env, err, syscall);
}

// Undoes a half-built watch: the handles close (freeing it), the pidfd and
// the pipe fds stay with the caller.
[[noreturn]] void AbandonWatch(Napi::Env env, Watch* w, int err, const char* syscall) {
  int pidfd = w->pidfd;
  w->pidfd = -1;
  for (auto& r : w->readers) {
    r->fd = -1;
    StopReader(r.get(), false);
  }
  Detach(w);
  ClosePidfdPoll(w);
  AbandonChild(env, w->pid, pidfd, err, syscall);
}

}  // namespace

void InitChildWatch(Napi::Env env, Napi::Object exports) {
  EnvState* state = new EnvState();
  state->env = env;
  if (napi_get_uv_event_loop(env, &state->loop) != napi_ok) {
    delete state;
    throw Napi::Error::New(env, "exactspawn: no event loop for this environment");
  }
  Napi::Function ctor = ChildHandle::Define(env);
  napi_create_reference(env, ctor, 1, &state->handle_ctor);
  exports.Set("ChildHandle", ctor);
  env.SetInstanceData<EnvState, FinalizeState>(state);
  if (napi_add_async_cleanup_hook(env, OnTeardown, state, &state->hook) != napi_ok) {
    throw Napi::Error::New(env, "exactspawn: could not register the teardown hook");
  }
}

Napi::Object WatchChild(Napi::Env env, pid_t pid, Napi::Function on_exit,
                        const CaptureRequest& capture, std::vector<int>* parent_ends,
                        bool guard_group) {
  EnvState* s = env.GetInstanceData<EnvState>();
  if (guard_group) {
    int guard_error = watchdog_guard(pid);
    if (guard_error < 0) AbandonChild(env, pid, -1, guard_error, "watchdog");
  }
  int pidfd = open_pidfd(pid);
  if (pidfd < 0) AbandonChild(env, pid, -1, pidfd, "pidfd_open");
  if (s == nullptr || s->tearing_down) AbandonChild(env, pid, pidfd, -ECANCELED, "uv_poll_init");

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
    AbandonChild(env, pid, pidfd, -ENOMEM, "pidfd_open");
  } catch (const std::bad_alloc&) {
    AbandonChild(env, pid, pidfd, -ENOMEM, "pidfd_open");
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
    AbandonChild(env, pid, pidfd, err, "uv_poll_init");
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
      AbandonWatch(env, w, -ENOMEM, "uv_poll_init");
    }
    r->watch = w;
    r->slot = slot;
    r->fd = (*parent_ends)[static_cast<size_t>(slot)];
    err = uv_poll_init(s->loop, &r->poll, r->fd);
    if (err != 0) AbandonWatch(env, w, err, "uv_poll_init");
    r->poll.data = r;
    r->active = true;
    w->open_handles++;
    err = uv_poll_start(&r->poll, UV_READABLE, OnPipeReadable);
    if (err != 0) AbandonWatch(env, w, err, "uv_poll_start");
  }
  err = uv_poll_start(&w->poll, UV_READABLE, OnPidfdReadable);
  if (err != 0) AbandonWatch(env, w, err, "uv_poll_start");

  // Nothing below throws: the watch owns the captured read ends from here on.
  w->delivered = false;
  for (int slot : capture.slots) (*parent_ends)[static_cast<size_t>(slot)] = -1;
  ChildHandle* handle = ChildHandle::Unwrap(object);
  handle->watch = w;
  handle->pid = pid;
  w->handle = handle;
  napi_create_reference(env, on_exit, 1, &w->on_exit);
  if (capture.on_overflow != nullptr) {
    napi_create_reference(env, capture.on_overflow, 1, &w->on_overflow);
  }
  napi_create_reference(env, object, 1, &w->handle_ref);
  return object;
}

}  // namespace exactspawn
