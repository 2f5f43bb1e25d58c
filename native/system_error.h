// system_error.h — builds Node-style system errors in the binding: an Error
// whose message is "syscall CODE path" with `code` (uv_err_name), negative
// `errno`, `syscall` and optional `path`, like Node's fs errors.
#pragma once

#include <napi.h>

#include <string>

namespace exactspawn {

// `negative_errno` is -errno as returned by core/.
Napi::Error SystemError(Napi::Env env, int negative_errno, const char* syscall,
                        const std::string* path = nullptr);

// Throws a TypeError (input the binding refuses to coerce).
[[noreturn]] void ThrowTypeError(Napi::Env env, const std::string& message);

}  // namespace exactspawn
