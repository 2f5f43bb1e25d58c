// dumpable_binding.cc — marshalling only; see dumpable_binding.h.
#include "dumpable_binding.h"

#include "core/dumpable.h"
#include "system_error.h"

namespace exactspawn {

Napi::Value SetDumpable(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] {
    if (info.Length() != 1 || !info[0].IsBoolean()) {
      ThrowTypeError(info.Env(), "setDumpable: expected (flag: boolean)");
    }
    return Napi::Number::New(info.Env(), set_dumpable(info[0].As<Napi::Boolean>().Value()));
  });
}

Napi::Value Dumpable(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return Napi::Number::New(info.Env(), dumpable_state()); });
}

}  // namespace exactspawn
