// errno_names.h — the symbolic name of an errno ("EINVAL"), from the addon's
// own table: strerrorname_np(3) needs glibc 2.32 and is not in musl, and
// libuv's uv_err_name is not exported by every runtime that loads Node-API
// addons. Async-signal-safe (a table lookup, no allocation).
#pragma once

namespace exactspawn {

// The name, or nullptr for a number Linux does not define.
const char* errno_name(int number);

// The name, or "UNKNOWN" (libuv's name for an unmapped error).
const char* errno_code(int number);

}  // namespace exactspawn
