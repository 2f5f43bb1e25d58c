// deadline_args.h — marshalling only: reads a run's deadline plan
// (nativeDeadline in src/spawn/deadline-plan.ts: { timeoutMs, endSignal,
// toGroup, graceMs, finalSignal, groupSignalAtExit, captureLimit }) into
// core/deadline_plan.h, for spawn (the deadline keeper) and spawnSync (its
// blocking loop) alike. Every field is checked (TypeError naming it, never a
// silent coercion); milliseconds are rounded up, so no deadline comes early.
#pragma once

#include <napi.h>

#include <cstddef>

#include "core/deadline_plan.h"

namespace exactspawn {

// `who` prefixes the messages ("spawn", "spawnSync").
void ReadDeadline(Napi::Env env, Napi::Object deadline, const char* who, DeadlinePlan* plan);

// The same plan as numbers, in one Float64Array (spawn's positional form,
// spawn_args.h): [timeoutMs, endSignal, toGroup (0 or 1), graceMs,
// finalSignal, groupSignalAtExit], each checked as above.
constexpr size_t kDeadlineNumbers = 6;
void ReadDeadlineNumbers(Napi::Env env, Napi::Value numbers, const char* who, DeadlinePlan* plan);

// deadline.captureLimit: bytes kept per captured pipe (SIZE_MAX past 2^53).
size_t ReadCaptureLimit(Napi::Env env, Napi::Object deadline, const char* who);

}  // namespace exactspawn
