// debug_binding.h — debugCounters(): { reapRetries } (core/reap.h) and
// { invalidWatchMoves } (watch_state.h) and { deadlinesPending }
// (core/deadline_keeper.h: runs the keeper has scheduled), for tests.
#pragma once

#include <napi.h>

namespace exactspawn {

Napi::Value DebugCounters(const Napi::CallbackInfo& info);

}  // namespace exactspawn
