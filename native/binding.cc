// binding.cc — the addon's entry point: registers the exported functions and
// the build stamp. Marshalling lives in the *_binding.cc peers; syscalls live
// in core/. No policy here.
#include <napi.h>

#include "child_watch.h"
#include "contain_binding.h"
#include "debug_binding.h"
#include "dumpable_binding.h"
#include "helper_binding.h"
#include "memfd_binding.h"
#include "pipe_binding.h"
#include "probe_binding.h"
#include "sandbox_binding.h"
#include "spawn_binding.h"
#include "spawn_sync_binding.h"
#include "watchdog_binding.h"

#define EXACTSPAWN_STR2(x) #x
#define EXACTSPAWN_STR(x) EXACTSPAWN_STR2(x)

namespace exactspawn {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("sourceStamp", Napi::String::New(env, EXACTSPAWN_STR(EXACTSPAWN_SOURCE_STAMP)));
  exports.Set("napiVersion", Napi::Number::New(env, NAPI_VERSION));
  exports.Set("probe", Napi::Function::New(env, Probe, "probe"));
  exports.Set("kernelSupport", Napi::Function::New(env, KernelSupportOf, "kernelSupport"));
  exports.Set("spawn", Napi::Function::New(env, Spawn, "spawn"));
  exports.Set("spawnSync", Napi::Function::New(env, SpawnSync, "spawnSync"));
  exports.Set("sandboxSupport", Napi::Function::New(env, SandboxSupportOf, "sandboxSupport"));
  exports.Set("sandboxFilter", Napi::Function::New(env, SandboxFilterOf, "sandboxFilter"));
  exports.Set("pipe", Napi::Function::New(env, Pipe, "pipe"));
  exports.Set("closeFd", Napi::Function::New(env, CloseFd, "closeFd"));
  exports.Set("startWatchdog", Napi::Function::New(env, StartWatchdog, "startWatchdog"));
  exports.Set("sealedMemfd", Napi::Function::New(env, SealedMemfd, "sealedMemfd"));
  exports.Set("probeContainment", Napi::Function::New(env, ProbeContainment, "probeContainment"));
  exports.Set("probePidNamespace",
              Napi::Function::New(env, ProbePidNamespace, "probePidNamespace"));
  exports.Set("debugCounters", Napi::Function::New(env, DebugCounters, "debugCounters"));
  exports.Set("setHelperPath", Napi::Function::New(env, SetHelperPath, "setHelperPath"));
  exports.Set("helperStatus", Napi::Function::New(env, HelperStatusOf, "helperStatus"));
  exports.Set("debugRefuseNotifies",
              Napi::Function::New(env, DebugRefuseNotifies, "debugRefuseNotifies"));
  exports.Set("debugRefuseClone3Pidfd",
              Napi::Function::New(env, DebugRefuseClone3Pidfd, "debugRefuseClone3Pidfd"));
  exports.Set("debugRefuseHelperExec",
              Napi::Function::New(env, DebugRefuseHelperExec, "debugRefuseHelperExec"));
  exports.Set("debugHoldWatchdogLaunch",
              Napi::Function::New(env, DebugHoldWatchdogLaunch, "debugHoldWatchdogLaunch"));
  exports.Set("setDumpable", Napi::Function::New(env, SetDumpable, "setDumpable"));
  exports.Set("dumpable", Napi::Function::New(env, Dumpable, "dumpable"));
  InitChildWatch(env, exports);
  return exports;
}

}  // namespace exactspawn

static Napi::Object InitAddon(Napi::Env env, Napi::Object exports) {
  return exactspawn::Init(env, exports);
}

NODE_API_MODULE(NODE_GYP_MODULE_NAME, InitAddon)
