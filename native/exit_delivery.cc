// exit_delivery.cc — turns a reaped child's exit (and its captured output)
// into JavaScript values and calls the JS callbacks from the event loop:
// changes to a watch only queue it (QueueCallbacks), and the dispatcher
// calls back after its pass (RunQueuedCallbacks; see watch_state.h).
//
// Raw Node-API only: this runs from loop callbacks, possibly while a worker
// is being terminated, where no exception can be thrown to anyone. A value
// that cannot be built (an output larger than a Buffer can hold) is
// delivered as the run's error instead, so the run always settles. An
// exception left pending by the callback (napi_make_callback drains the
// nextTick queue and microtasks inside its own TryCatch) is a user's
// exception, not ours to swallow: it goes to napi_fatal_exception, as a
// throw from a child_process callback would reach 'uncaughtException'.
#include <string.h>

#include <string>

#include "core/signal_names.h"
#include "spawn_args.h"
#include "system_error.h"
#include "tree_usage.h"
#include "watch_state.h"

namespace exactspawn {

namespace {

// output[slot] = Buffer for every captured pipe JavaScript did not take over.
// Each pipe's memory is released as soon as its Buffer exists.
bool OutputToJs(napi_env env, Watch* w, napi_value* out) {
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
    void* data = nullptr;
    bool made =
        napi_create_buffer_copy(env, r->bytes.size(), r->bytes.data(), &data, &bytes) == napi_ok;
    std::string().swap(r->bytes);
    if (!made || napi_set_element(env, output, static_cast<uint32_t>(r->slot), bytes) != napi_ok) {
      return false;
    }
  }
  *out = output;
  return true;
}

// A number, or null where the kernel did not say (-1).
bool KnownToJs(napi_env env, int64_t number, napi_value* out) {
  return (number < 0 ? napi_get_null(env, out)
                     : napi_create_double(env, static_cast<double>(number), out)) == napi_ok;
}

bool SetKnown(napi_env env, napi_value object, const char* key, int64_t number) {
  napi_value value;
  return KnownToJs(env, number, &value) &&
         napi_set_named_property(env, object, key, value) == napi_ok;
}

// exit.tree: what a contained step's whole tree used (core/cgroup.h).
bool TreeToJs(napi_env env, const CgroupUsage& usage, napi_value* out) {
  napi_value tree;
  if (napi_create_object(env, &tree) != napi_ok) return false;
  for (const TreeUsageField& field : kTreeUsageFields) {
    if (!SetKnown(env, tree, field.key, usage.*field.member)) return false;
  }
  *out = tree;
  return true;
}

// The exit's values in the order of the positional form (child_watch.h):
// exitCode, signal, userCpuMicros, systemCpuMicros, maxRssKiB, output and
// tree (undefined where there are none), exitedAt (CLOCK_MONOTONIC ms, or
// null). *count: how many.
constexpr size_t kExitValues = 8;
constexpr const char* kExitKeys[kExitValues] = {
    "exitCode",  "signal", "userCpuMicros", "systemCpuMicros",
    "maxRssKiB", "output", "tree",          "exitedAt"};

bool ExitValues(napi_env env, Watch* w, napi_value* values, size_t* count) {
  const ChildExit& exit = w->exit;
  *count = 5;
  if ((exit.exited ? napi_create_int32(env, exit.exit_code, &values[0])
                   : napi_get_null(env, &values[0])) != napi_ok) {
    return false;
  }
  napi_status status = exit.signal == 0
                           ? napi_get_null(env, &values[1])
                           : napi_create_string_utf8(env, signal_name(exit.signal).c_str(),
                                                     NAPI_AUTO_LENGTH, &values[1]);
  if (status != napi_ok ||
      napi_create_double(env, static_cast<double>(exit.user_cpu_micros), &values[2]) != napi_ok ||
      napi_create_double(env, static_cast<double>(exit.system_cpu_micros), &values[3]) != napi_ok ||
      !KnownToJs(env, exit.max_rss_kib, &values[4])) {
    return false;
  }
  const bool has_output = !w->readers.empty();
  if (napi_get_undefined(env, &values[5]) != napi_ok ||
      napi_get_undefined(env, &values[6]) != napi_ok) {
    return false;
  }
  if (has_output && !OutputToJs(env, w, &values[5])) return false;
  if (w->has_usage && !TreeToJs(env, w->usage, &values[6])) return false;
  *count = 8;
  return (exit.exited_at_ms > 0 ? napi_create_double(env, exit.exited_at_ms, &values[7])
                                : napi_get_null(env, &values[7])) == napi_ok;
}

// The object form: { exitCode, signal, userCpuMicros, systemCpuMicros, maxRssKiB, output?, tree?,
// exitedAt }.
bool ExitToJs(napi_env env, Watch* w, napi_value* out) {
  napi_value values[kExitValues];
  size_t count = 0;
  napi_value object;
  if (!ExitValues(env, w, values, &count) || napi_create_object(env, &object) != napi_ok) {
    return false;
  }
  for (size_t i = 0; i < count; ++i) {
    if (i == 5 && w->readers.empty()) continue;  // output is set only when captured
    if (i == 6 && !w->has_usage) continue;       // tree only for a contained step
    if (napi_set_named_property(env, object, kExitKeys[i], values[i]) != napi_ok) return false;
  }
  *out = object;
  return true;
}

// Someone else reaped our pid (waitpid(-1), or SIGCHLD set to SIG_IGN elsewhere).
bool ReapErrorToJs(napi_env env, int negative_errno, napi_value* out) {
  return SystemErrorToJs(env, {negative_errno, "wait4", "watch"}, nullptr, out);
}

// A credential-changing child failed before its exec: the error spawnSync
// throws for it (system_error.h), with the path of the failing step.
bool StartErrorToJs(napi_env env, Watch* w, napi_value* out) {
  const ChildPathFailure& failure = w->start_failure;
  const std::string& path = StartFailurePath(failure, w->start_file, w->start_cwd);
  return SystemErrorToJs(env, {w->start_error, failure.syscall, failure.step}, &path, out);
}

// An Error { code, message } that is no system error.
bool ErrorToJs(napi_env env, const char* code_name, const char* message, napi_value* out) {
  napi_value code;
  napi_value text;
  return napi_create_string_utf8(env, code_name, NAPI_AUTO_LENGTH, &code) == napi_ok &&
         napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &text) == napi_ok &&
         napi_create_error(env, code, text, out) == napi_ok;
}

// The exit could not be converted: the exception V8 left (e.g. a RangeError
// for a Buffer over buffer.constants.MAX_LENGTH), or one of our own.
bool ConversionErrorToJs(napi_env env, napi_value* out) {
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) == napi_ok && pending &&
      napi_get_and_clear_last_exception(env, out) == napi_ok) {
    return true;
  }
  return ErrorToJs(env, "ERR_BUFFER_TOO_LARGE",
                   "exactspawn: the captured output could not be converted to a Buffer", out);
}

// Calls fn(receiver, ...args) as a top-level callback (nextTicks and
// microtasks drain afterwards; nested inside a JS call they wait for the
// outer one).
void CallJs(napi_env env, napi_value receiver, napi_value fn, size_t argc, const napi_value* args) {
  napi_value ignored;
  if (napi_make_callback(env, nullptr, receiver, fn, argc, args, &ignored) !=
      napi_pending_exception) {
    return;
  }
  napi_value pending = nullptr;
  napi_valuetype type = napi_undefined;
  if (napi_get_and_clear_last_exception(env, &pending) != napi_ok || pending == nullptr ||
      napi_typeof(env, pending, &type) != napi_ok || type == napi_undefined) {
    return;  // nothing recorded: the environment refused to run JavaScript (teardown)
  }
  // Refused (a no-op) when the environment is terminating; otherwise the
  // host's 'uncaughtException' path sees it, as with child_process.
  napi_fatal_exception(env, pending);
}

// The exit is due: the child is reaped, no captured pipe is still read and
// a contained step's tree is gone (tree_watch.cc).
bool ExitDue(const Watch* w) {
  if (w->life != Life::kReaped || w->tree_pending) return false;
  for (auto& r : w->readers) {
    if (r->active) return false;
  }
  return true;
}

bool OverflowDue(const Watch* w) {
  for (auto& r : w->readers) {
    if (r->overflow_due) return true;
  }
  return false;
}

// Tells JavaScript that a captured slot went over the limit.
void NotifyOverflow(Watch* w, int slot) {
  if (Finished(w) || w->on_overflow == nullptr) return;
  napi_env env = w->state->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value callback = nullptr;
  napi_value receiver = nullptr;
  napi_value arg = nullptr;
  if (napi_get_reference_value(env, w->on_overflow, &callback) == napi_ok &&
      napi_get_reference_value(env, w->handle_ref, &receiver) == napi_ok && callback != nullptr &&
      receiver != nullptr && napi_create_int32(env, slot, &arg) == napi_ok) {
    CallJs(env, receiver, callback, 1, &arg);
  }
  napi_close_handle_scope(env, scope);
}

// Delivers the exit and detaches the JS side (the watch is freed by the caller).
void Deliver(Watch* w) {
  napi_env env = w->state->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) {
    Detach(w, Life::kDelivered);
    return;
  }
  napi_value callback = nullptr;
  napi_value receiver = nullptr;
  napi_value values[kExitValues];
  size_t count = 1;
  bool ready = napi_get_reference_value(env, w->on_exit, &callback) == napi_ok &&
               napi_get_reference_value(env, w->handle_ref, &receiver) == napi_ok &&
               callback != nullptr && receiver != nullptr;
  if (ready) {
    if (w->reap_error < 0) {
      ready = ReapErrorToJs(env, w->reap_error, &values[0]);
    } else if (w->start_error < 0) {
      ready = StartErrorToJs(env, w, &values[0]);
    } else if (w->positional) {
      ready = ExitValues(env, w, values, &count);
      if (!ready) {
        count = 1;
        ready = ConversionErrorToJs(env, &values[0]);
      }
    } else {
      ready = ExitToJs(env, w, &values[0]) || ConversionErrorToJs(env, &values[0]);
    }
  }
  Detach(w, Life::kDelivered);
  if (ready) CallJs(env, receiver, callback, count, values);
  napi_close_handle_scope(env, scope);
}

// Runs w's due callbacks; false when the environment's teardown began inside
// one (w may then be gone: the caller touches nothing more).
bool CallBack(Watch* w) {
  EnvState* s = w->state;
  for (size_t i = 0; i < w->readers.size(); ++i) {
    Reader* r = w->readers[i].get();
    if (!r->overflow_due) continue;
    r->overflow_due = false;
    NotifyOverflow(w, r->slot);
    if (s->tearing_down) return false;
  }
  if (ExitDue(w)) Deliver(w);
  return !s->tearing_down;
}

}  // namespace

void QueueCallbacks(Watch* w) {
  EnvState* s = w->state;
  if (w->due || Finished(w) || s->tearing_down || !(ExitDue(w) || OverflowDue(w))) return;
  w->due = true;
  w->due_next = nullptr;
  if (s->due_tail != nullptr) {
    s->due_tail->due_next = w;
  } else {
    s->due_head = w;
  }
  s->due_tail = w;
  UpdateHold(w);  // the host waits for the callbacks of a ref'd child
  if (!s->in_pass) RequestPass(s);
}

void RunQueuedCallbacks(EnvState* s) {
  while (s->due_head != nullptr && !s->tearing_down) {
    Watch* w = s->due_head;
    s->due_head = w->due_next;
    if (s->due_head == nullptr) s->due_tail = nullptr;
    w->due_next = nullptr;
    if (!CallBack(w)) return;
    w->due = false;
    UpdateHold(w);
    MaybeFree(w);
  }
}

}  // namespace exactspawn
