// debug_binding.h — for tests: debugCounters(): { reapRetries }
// (core/reap.h), { invalidWatchMoves } (watch_state.h) and { deadlinesPending }
// (core/deadline_keeper.h: runs the keeper has scheduled); and
// debugRefuseNotifies(n): the exit watch's thread treats its next n
// thread-safe-function calls as refused by Node-API (watch_events.cc), as a
// call that finds no memory would be; debugRefuseClone3Pidfd(n): the next n
// clone3 calls that ask CLONE_PIDFD fail with EINVAL (core/clone3.h), and
// debugCounters().clone3Children counts the children clone3 started;
// debugRefuseHelperExec(errno, count): the first count of each exec helper
// start's exec attempts fail with errno (core/child_path.h);
// debugHoldWatchdogLaunch(n): the next n watchdog launches hold their thread
// right after the spawn, for good (core/watchdog.h).
#pragma once

#include <napi.h>

namespace exactspawn {

Napi::Value DebugCounters(const Napi::CallbackInfo& info);
Napi::Value DebugRefuseNotifies(const Napi::CallbackInfo& info);
Napi::Value DebugRefuseClone3Pidfd(const Napi::CallbackInfo& info);
Napi::Value DebugRefuseHelperExec(const Napi::CallbackInfo& info);
Napi::Value DebugHoldWatchdogLaunch(const Napi::CallbackInfo& info);
// True (once per refusal asked for) when the next call is to be refused; any thread.
bool DebugRefuseNotify();

}  // namespace exactspawn
