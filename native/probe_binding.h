// probe_binding.h — marshals exactspawn::probe_limits() into a JS object.
#pragma once

#include <napi.h>

namespace exactspawn {

Napi::Value Probe(const Napi::CallbackInfo& info);

// { pidfdOpen, closeRange }: null where the kernel has the call, else the errno name.
Napi::Value KernelSupportOf(const Napi::CallbackInfo& info);

}  // namespace exactspawn
