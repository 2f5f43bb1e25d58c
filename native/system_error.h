// system_error.h — the binding's one error model. Binding code throws
// Napi::Error (Node-style system errors built from a StepFailure: message
// "syscall CODE path" with `code`, negative `errno`, `syscall` and optional
// `path`, like Node's fs errors, plus `step`, the library step that failed;
// TypeErrors for refused input), and every entry point runs inside
// Marshal(), which turns any C++ exception into a pending JavaScript
// exception with a raw napi_throw and never rethrows. While an environment
// is terminating (a worker being stopped) napi_throw is refused; the
// exception is then dropped, because nothing can observe it, instead of
// node-addon-api's rethrow ending in std::terminate. Loop callbacks (no JS
// caller to throw to) use raw Node-API and never throw at all.
#pragma once

#include <napi.h>

#include <exception>
#include <string>

#include "core/step_failure.h"

namespace exactspawn {

// The one builder of system errors, with raw Node-API (so loop callbacks,
// which must not throw, use it too): `code`, `errno`, `syscall` (absent when
// no system call failed; the message then starts with the step), `path` when
// given, `step`. Returns false when Node-API refused (a terminating env).
bool SystemErrorToJs(napi_env env, const StepFailure& failure, const std::string* path,
                     napi_value* out) noexcept;

// The same error as a Napi::Error, for binding code to throw.
Napi::Error SystemError(Napi::Env env, const StepFailure& failure,
                        const std::string* path = nullptr);

// The `code` for -errno ("ENOENT").
const char* ErrnoCode(int negative_errno);

// Throws a TypeError (input the binding refuses to coerce).
[[noreturn]] void ThrowTypeError(Napi::Env env, const std::string& message);

// Makes `error` the pending JavaScript exception if the environment can still
// take one; never throws.
void ThrowQuietly(napi_env env, const Napi::Error& error) noexcept;

// The same for a failure that is not a Napi::Error (std::exception, unknown).
void ThrowMessageQuietly(napi_env env, const char* message) noexcept;

// Runs one binding method body: its result, or an empty value with the
// failure pending in JavaScript. No C++ exception leaves it.
template <typename Body>
Napi::Value Marshal(const Napi::CallbackInfo& info, Body&& body) noexcept {
  napi_env env = info.Env();
  try {
    return body();
  } catch (const Napi::Error& error) {
    ThrowQuietly(env, error);
  } catch (const std::exception& error) {
    ThrowMessageQuietly(env, error.what());
  } catch (...) {
    ThrowMessageQuietly(env, "unexpected native failure");
  }
  return Napi::Value();
}

}  // namespace exactspawn
