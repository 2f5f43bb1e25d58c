// debug_binding.h — debugCounters(): { reapRetries } (core/reap.h), for tests.
#pragma once

#include <napi.h>

namespace exactspawn {

Napi::Value DebugCounters(const Napi::CallbackInfo& info);

}  // namespace exactspawn
