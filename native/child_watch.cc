// child_watch.cc — see child_watch.h.
#include "child_watch.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cmath>
#include <string>

#include "core/child_exit.h"
#include "core/orphan_reaper.h"
#include "core/signal_names.h"
#include "system_error.h"

namespace exactspawn {

namespace {

class ChildHandle;
struct EnvState;

struct Watch {
  uv_poll_t poll;
  EnvState* state = nullptr;
  pid_t pid = 0;
  int pidfd = -1;
  bool closing = false;
  ChildHandle* handle = nullptr;
  napi_ref on_exit = nullptr;
  napi_ref handle_ref = nullptr;  // keeps the JS handle alive until the exit is delivered
  Watch* prev = nullptr;
  Watch* next = nullptr;
};

struct EnvState {
  napi_env env = nullptr;
  uv_loop_t* loop = nullptr;
  napi_ref handle_ctor = nullptr;  // deleted by FinalizeState (valgrind: 40 bytes per env)
  napi_async_cleanup_hook_handle hook = nullptr;
  bool tearing_down = false;
  bool env_gone = false;
  Watch* head = nullptr;
  size_t live = 0;
};

void MaybeDelete(EnvState* state) {
  if (state->env_gone && state->live == 0 && state->hook == nullptr) delete state;
}

class ChildHandle : public Napi::ObjectWrap<ChildHandle> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "ChildHandle",
        {InstanceMethod<&ChildHandle::Kill>("kill"),
         InstanceMethod<&ChildHandle::KillGroup>("killGroup"),
         InstanceMethod<&ChildHandle::Ref>("ref"), InstanceMethod<&ChildHandle::Unref>("unref"),
         InstanceMethod<&ChildHandle::HasRef>("hasRef")});
  }

  explicit ChildHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ChildHandle>(info) {}

  Watch* watch = nullptr;  // null once the child has been reaped or the env torn down
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
    int r = watch == nullptr ? -ESRCH : signal_pidfd(watch->pidfd, sig);
    return Napi::Number::New(info.Env(), r);
  }

  // kill(-pid): the caller (TypeScript) only asks for groups it created.
  Napi::Value KillGroup(const Napi::CallbackInfo& info) {
    int sig = SignalArg(info);
    return Napi::Number::New(info.Env(), signal_group(pid, sig));
  }

  Napi::Value Ref(const Napi::CallbackInfo& info) {
    if (watch != nullptr) uv_ref(reinterpret_cast<uv_handle_t*>(&watch->poll));
    return info.Env().Undefined();
  }

  Napi::Value Unref(const Napi::CallbackInfo& info) {
    if (watch != nullptr) uv_unref(reinterpret_cast<uv_handle_t*>(&watch->poll));
    return info.Env().Undefined();
  }

  Napi::Value HasRef(const Napi::CallbackInfo& info) {
    bool has = watch != nullptr && uv_has_ref(reinterpret_cast<uv_handle_t*>(&watch->poll));
    return Napi::Boolean::New(info.Env(), has);
  }
};

void Unlink(Watch* w) {
  EnvState* s = w->state;
  if (w->prev != nullptr) w->prev->next = w->next;
  if (w->next != nullptr) w->next->prev = w->prev;
  if (s->head == w) s->head = w->next;
}

void OnClose(uv_handle_t* handle) {
  Watch* w = static_cast<Watch*>(handle->data);
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

// Detaches the JS side and closes the poll handle. Must run while the env is alive.
void CloseWatch(Watch* w) {
  w->closing = true;
  if (w->handle != nullptr) {
    w->handle->watch = nullptr;
    w->handle = nullptr;
  }
  // Raw calls: a failure here (a terminating env) must not become a fatal error.
  if (w->on_exit != nullptr) napi_delete_reference(w->state->env, w->on_exit);
  if (w->handle_ref != nullptr) napi_delete_reference(w->state->env, w->handle_ref);
  w->on_exit = nullptr;
  w->handle_ref = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&w->poll), OnClose);
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

bool ExitToJs(napi_env env, const ChildExit& exit, napi_value* out) {
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

void OnReadable(uv_poll_t* poll, int /*status*/, int /*events*/) {
  Watch* w = static_cast<Watch*>(poll->data);
  if (w->closing) return;
  ChildExit exit;
  int r = reap_child(w->pid, &exit);
  if (r == 0) return;  // not a zombie yet; the pidfd will be readable again
  uv_poll_stop(poll);

  napi_env env = w->state->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) {
    CloseWatch(w);
    return;
  }
  napi_value callback = nullptr;
  napi_value receiver = nullptr;
  napi_value result = nullptr;
  bool ready = napi_get_reference_value(env, w->on_exit, &callback) == napi_ok &&
               napi_get_reference_value(env, w->handle_ref, &receiver) == napi_ok &&
               callback != nullptr && receiver != nullptr &&
               (r < 0 ? ReapErrorToJs(env, r, &result) : ExitToJs(env, exit, &result));
  CloseWatch(w);
  if (ready) {
    napi_value ignored;
    // napi_make_callback also drains nextTicks and microtasks, so promises settle now.
    if (napi_make_callback(env, nullptr, receiver, callback, 1, &result, &ignored) ==
        napi_pending_exception) {
      // The TypeScript callback never throws; this is a terminating worker.
      napi_value pending;
      napi_get_and_clear_last_exception(env, &pending);
    }
  }
  napi_close_handle_scope(env, scope);
}

// Environment teardown (worker exit, process exit): stop every watch without
// calling into JavaScript; a child that is still running keeps running and
// is handed to the orphan reaper so it never stays a zombie.
void OnTeardown(napi_async_cleanup_hook_handle handle, void* arg) {
  EnvState* s = static_cast<EnvState*>(arg);
  s->hook = handle;
  s->tearing_down = true;
  for (Watch* w = s->head; w != nullptr; w = w->next) {
    if (w->closing) continue;
    uv_poll_stop(&w->poll);
    ChildExit exit;
    if (reap_child(w->pid, &exit) == 0 && hand_to_orphan_reaper(w->pid, w->pidfd) == 0) {
      w->pidfd = -1;  // the reaper owns it now
    }
    CloseWatch(w);
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
  kill(pid, SIGKILL);
  reap_child_blocking(pid);
  throw SystemError(env, err, syscall);
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

Napi::Object WatchChild(Napi::Env env, pid_t pid, Napi::Function on_exit) {
  EnvState* s = env.GetInstanceData<EnvState>();
  int pidfd = open_pidfd(pid);
  if (pidfd < 0) AbandonChild(env, pid, -1, pidfd, "pidfd_open");
  if (s == nullptr || s->tearing_down) AbandonChild(env, pid, pidfd, -ECANCELED, "uv_poll_init");

  Napi::Object object;
  try {
    napi_value ctor_value;
    napi_get_reference_value(env, s->handle_ctor, &ctor_value);
    object = Napi::Function(env, ctor_value).New({});
    object.Set("pid", Napi::Number::New(env, pid));
  } catch (const Napi::Error&) {
    AbandonChild(env, pid, pidfd, -ENOMEM, "pidfd_open");
  }

  Watch* w = new Watch();
  w->state = s;
  w->pid = pid;
  w->pidfd = pidfd;
  int err = uv_poll_init(s->loop, &w->poll, pidfd);
  if (err != 0) {
    delete w;
    AbandonChild(env, pid, pidfd, err, "uv_poll_init");
  }
  w->poll.data = w;
  // Linked as soon as the handle exists so the close callback's bookkeeping holds.
  w->next = s->head;
  if (s->head != nullptr) s->head->prev = w;
  s->head = w;
  s->live++;
  err = uv_poll_start(&w->poll, UV_READABLE, OnReadable);
  if (err != 0) {
    w->pidfd = -1;
    CloseWatch(w);
    AbandonChild(env, pid, pidfd, err, "uv_poll_start");
  }
  ChildHandle* handle = ChildHandle::Unwrap(object);
  handle->watch = w;
  handle->pid = pid;
  w->handle = handle;
  napi_create_reference(env, on_exit, 1, &w->on_exit);
  napi_create_reference(env, object, 1, &w->handle_ref);
  return object;
}

}  // namespace exactspawn
