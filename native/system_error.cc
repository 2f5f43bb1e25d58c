// system_error.cc — see system_error.h.
#include "system_error.h"

#include "core/errno_names.h"

namespace exactspawn {

const char* ErrnoCode(int negative_errno) {
  // Every Linux errno has its name (ENOEXEC included, which libuv does not map).
  return errno_code(-negative_errno);
}

std::string SystemErrorMessage(int negative_errno, const char* syscall, const std::string* path) {
  std::string message = std::string(syscall) + " " + ErrnoCode(negative_errno);
  if (path != nullptr) message += " " + *path;
  return message;
}

Napi::Error SystemError(Napi::Env env, int negative_errno, const char* syscall,
                        const std::string* path) {
  const char* code = ErrnoCode(negative_errno);
  Napi::Error error = Napi::Error::New(env, SystemErrorMessage(negative_errno, syscall, path));
  error.Set("code", Napi::String::New(env, code));
  error.Set("errno", Napi::Number::New(env, negative_errno));
  error.Set("syscall", Napi::String::New(env, syscall));
  if (path != nullptr) error.Set("path", Napi::String::New(env, *path));
  return error;
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
