// system_error.h — the binding's one error model. Binding code throws
// Napi::Error (Node-style system errors: message "syscall CODE path" with
// `code`, negative `errno`, `syscall` and optional `path`, like Node's fs
// errors; TypeErrors for refused input), and every entry point runs inside
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

namespace exactspawn {

// `negative_errno` is -errno as returned by core/.
Napi::Error SystemError(Napi::Env env, int negative_errno, const char* syscall,
                        const std::string* path = nullptr);

// The error's `code` ("ENOENT") and `message` ("syscall CODE path"), for the
// loop callbacks that build the same error with raw Node-API.
const char* ErrnoCode(int negative_errno);
std::string SystemErrorMessage(int negative_errno, const char* syscall, const std::string* path);

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
