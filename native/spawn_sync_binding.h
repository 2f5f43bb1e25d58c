// spawn_sync_binding.h — marshals spawnSync(): starts one child like spawn()
// and runs it to completion on the calling thread (core/run_sync.h).
#pragma once

#include <napi.h>

namespace exactspawn {

// spawnSync({ ...spawn's shared fields, input?: Buffer, captureLimit: number,
//   timeout?: number, killSignal: int, killGraceMs: number })
//   → { pid, exitCode, signal, userCpuMicros, systemCpuMicros,
//       output: [null, Buffer|null, Buffer|null], reason: "timeout"|"maxBuffer"|null }
Napi::Value SpawnSync(const Napi::CallbackInfo& info);

}  // namespace exactspawn
