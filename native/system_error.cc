// system_error.cc — see system_error.h.
#include "system_error.h"

#include <string.h>
#include <uv.h>

namespace exactspawn {

Napi::Error SystemError(Napi::Env env, int negative_errno, const char* syscall,
                        const std::string* path) {
  // glibc names every errno (ENOEXEC included, which libuv does not map).
  const char* code = strerrorname_np(-negative_errno);
  if (code == nullptr) code = uv_err_name(negative_errno);
  std::string message = std::string(syscall) + " " + code;
  if (path != nullptr) message += " " + *path;
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  error.Set("errno", Napi::Number::New(env, negative_errno));
  error.Set("syscall", Napi::String::New(env, syscall));
  if (path != nullptr) error.Set("path", Napi::String::New(env, *path));
  return error;
}

void ThrowTypeError(Napi::Env env, const std::string& message) {
  throw Napi::TypeError::New(env, message);
}

}  // namespace exactspawn
