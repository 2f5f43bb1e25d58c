// spawn_sync_binding.h — marshals spawnSync(): starts one child like spawn()
// and runs it to completion on the calling thread (core/run_sync.h).
#pragma once

#include <napi.h>

namespace exactspawn {

// spawnSync({ ...spawn's shared fields, input?: Buffer, deadline: { timeoutMs,
//   endSignal, toGroup, graceMs, finalSignal, groupSignalAtExit, captureLimit } })
//   → { pid, exitCode, signal, userCpuMicros, systemCpuMicros,
//       output: [null, Buffer|null, Buffer|null],
//       endings: [{ cause: "timeout"|"maxBuffer", leaderRunning: boolean }] }
Napi::Value SpawnSync(const Napi::CallbackInfo& info);

}  // namespace exactspawn
