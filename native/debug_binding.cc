// debug_binding.cc — marshalling only; see debug_binding.h.
#include "debug_binding.h"

#include "core/deadline_keeper.h"
#include "core/reap.h"
#include "system_error.h"
#include "watch_state.h"

namespace exactspawn {

Napi::Value DebugCounters(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] {
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("reapRetries", Napi::Number::New(info.Env(), static_cast<double>(reap_retries())));
    out.Set("invalidWatchMoves",
            Napi::Number::New(info.Env(), static_cast<double>(InvalidWatchMoves())));
    out.Set("deadlinesPending",
            Napi::Number::New(info.Env(), static_cast<double>(deadline_keeper_pending())));
    return out;
  });
}

}  // namespace exactspawn
