// system_error.cc — see system_error.h.
#include "system_error.h"

#include <errno.h>

#include "core/errno_names.h"

namespace exactspawn {

namespace {

bool SetString(napi_env env, napi_value object, const char* key, const char* text) {
  napi_value value;
  return napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &value) == napi_ok &&
         napi_set_named_property(env, object, key, value) == napi_ok;
}

}  // namespace

const char* ErrnoCode(int negative_errno) {
  // Every Linux errno has its name (ENOEXEC included, which libuv does not map).
  return errno_code(-negative_errno);
}

bool SystemErrorToJs(napi_env env, const StepFailure& failure, const std::string* path,
                     napi_value* out) noexcept {
  try {
    const int negative_errno = failure.err < 0 ? failure.err : -EIO;
    const char* code = ErrnoCode(negative_errno);
    const char* step = failure.step != nullptr && failure.step[0] != '\0' ? failure.step : "native";
    const char* syscall =
        failure.syscall != nullptr && failure.syscall[0] != '\0' ? failure.syscall : nullptr;
    std::string message = std::string(syscall != nullptr ? syscall : step) + " " + code;
    if (path != nullptr) message += " " + *path;
    napi_value text;
    napi_value error;
    napi_value number;
    if (napi_create_string_utf8(env, message.c_str(), NAPI_AUTO_LENGTH, &text) != napi_ok ||
        napi_create_error(env, nullptr, text, &error) != napi_ok ||
        !SetString(env, error, "code", code) ||
        napi_create_int32(env, negative_errno, &number) != napi_ok ||
        napi_set_named_property(env, error, "errno", number) != napi_ok ||
        (syscall != nullptr && !SetString(env, error, "syscall", syscall)) ||
        (path != nullptr && !SetString(env, error, "path", path->c_str())) ||
        !SetString(env, error, "step", step)) {
      return false;
    }
    *out = error;
    return true;
  } catch (...) {
    return false;  // the message could not be allocated
  }
}

Napi::Error SystemError(Napi::Env env, const StepFailure& failure, const std::string* path) {
  napi_value error;
  if (!SystemErrorToJs(env, failure, path, &error)) {
    return Napi::Error::New(env, "exactspawn: a system error could not be built");
  }
  return Napi::Error(env, error);
}

void ThrowTypeError(Napi::Env env, const std::string& message) {
  throw Napi::TypeError::New(env, message);
}

void ThrowQuietly(napi_env env, const Napi::Error& error) noexcept {
  try {
    napi_value value = error.Value();
    // Refused only while the environment is terminating: nobody is left to catch it.
    if (value != nullptr) napi_throw(env, value);
  } catch (...) {
    // Reading the error back failed for the same reason; there is nothing to report to.
  }
}

void ThrowMessageQuietly(napi_env env, const char* message) noexcept {
  std::string text = std::string("exactspawn: ") + message;
  napi_value js_text;
  napi_value error;
  if (napi_create_string_utf8(env, text.c_str(), NAPI_AUTO_LENGTH, &js_text) == napi_ok &&
      napi_create_error(env, nullptr, js_text, &error) == napi_ok) {
    napi_throw(env, error);
  }
}

}  // namespace exactspawn
