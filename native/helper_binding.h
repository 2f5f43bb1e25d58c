// helper_binding.h — marshals the exec helper's location (core/helper_file.h):
//   setHelperPath(path: string) (the loader calls it once, with the helper
//     beside the loaded .node; tests may call it again; opened at first use)
//   helperStatus() → HelperStatus (opens it now if not yet)
// HelperStatus is { path: string, run: "file" | "memory" | "unavailable" |
// "unset", error?: Error } (error: why it cannot run, a Node-style system
// error with syscall, path and step "helper").
#pragma once

#include <napi.h>

namespace exactspawn {

Napi::Value SetHelperPath(const Napi::CallbackInfo& info);
Napi::Value HelperStatusOf(const Napi::CallbackInfo& info);

}  // namespace exactspawn
