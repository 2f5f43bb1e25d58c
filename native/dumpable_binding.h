// dumpable_binding.h — marshals core/dumpable.h: setDumpable(flag) and
// dumpable().
#pragma once

#include <napi.h>

namespace exactspawn {

// setDumpable(flag: boolean) → 0 or a negative errno. TypeError for a
// non-boolean.
Napi::Value SetDumpable(const Napi::CallbackInfo& info);

// dumpable() → 0, 1, 2 (prctl PR_GET_DUMPABLE) or a negative errno.
Napi::Value Dumpable(const Napi::CallbackInfo& info);

}  // namespace exactspawn
