// child_watch.h — watches one spawned child's exit on the addon's own event
// loop and exposes it to JavaScript as a ChildHandle.
//
// A pidfd (pidfd_open(2)) is polled with a uv_poll_t on the loop from
// napi_get_uv_event_loop (never uv_default_loop). On the first readable event
// the poll is stopped (a pidfd stays readable), exactly that pid is reaped with
// wait4(2), the handle is closed (the pidfd is closed in the close callback;
// uv_poll does not own it) and the JS callback receives
// { exitCode, signal, userCpuMicros, systemCpuMicros }. No thread, no
// threadpool work. An async cleanup hook (napi_add_async_cleanup_hook) closes
// live watches when the environment is torn down (worker exit, process
// exit); children still running are handed to the orphan reaper, never
// killed.
#pragma once

#include <napi.h>
#include <sys/types.h>

namespace exactspawn {

// Per-environment set-up: the ChildHandle class and the teardown hook.
void InitChildWatch(Napi::Env env, Napi::Object exports);

// Starts watching `pid` (just spawned). Returns the ChildHandle
// { pid, kill(sig), killGroup(sig), ref(), unref(), hasRef() }. On failure
// the child is killed and reaped, and a system error is thrown.
Napi::Object WatchChild(Napi::Env env, pid_t pid, Napi::Function on_exit);

}  // namespace exactspawn
