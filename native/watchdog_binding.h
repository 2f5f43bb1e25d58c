// watchdog_binding.h — marshals core/watchdog.h's start to JavaScript.
#pragma once

#include <napi.h>

namespace exactspawn {

// startWatchdog({ file, argv }) → the watchdog's pid.
Napi::Value StartWatchdog(const Napi::CallbackInfo& info);

}  // namespace exactspawn
