// probe_binding.h — marshals exactspawn::probe_limits() into a JS object.
#pragma once

#include <napi.h>

namespace exactspawn {

Napi::Value Probe(const Napi::CallbackInfo& info);

}  // namespace exactspawn
