// sandbox_binding.h — marshalling only: reads spawn's optional `sandbox`
//   { readAll: boolean, read: string[], write: string[], exec: string[],
//     execWritable: boolean, network: boolean, landlock: boolean, seccomp: boolean,
//     dropCapabilities: boolean, readOnlyView: boolean, userNamespace: boolean }
// (absolute paths; `landlock`/`seccomp`/`readOnlyView` say which parts to apply, as decided
// by the TypeScript policy against sandboxSupport()) into the plan the exec
// helper applies (it builds the Landlock ruleset from the paths itself), and
// exports sandboxSupport() and sandboxFilter() (the seccomp program as
// [code, jt, jf, k] rows, for tests).
#pragma once

#include <napi.h>

#include <string>
#include <vector>

#include "core/sandbox.h"

namespace exactspawn {

// What the host asked for; paths are absolute.
struct SandboxSpec {
  bool read_all = true;
  std::vector<std::string> read;
  std::vector<std::string> write;
  std::vector<std::string> exec;
  bool exec_writable = false;
  bool network = false;
  std::vector<std::string> view;  // the write paths the view clones (decided in TypeScript)
};

struct SandboxInput {
  SandboxSpec spec;
  bool landlock = false;
  bool seccomp = false;
  std::vector<const char*> read_paths, write_paths, exec_paths;  // into spec
  LandlockRules rules;
  bool read_only_view = false;
  bool user_namespace = false;
  std::string uid_map;
  std::string gid_map;
  std::string cwd;
  std::vector<const char*> view_paths;  // into spec.view
  MountView view;
  SandboxPlan plan;
  SandboxInput() = default;
  SandboxInput(const SandboxInput&) = delete;
  SandboxInput& operator=(const SandboxInput&) = delete;
};

// false when options.sandbox is undefined. Throws TypeError on a bad field.
bool ReadSandbox(Napi::Env env, Napi::Object options, SandboxInput* input);

// Builds what the exec helper applies (input->plan, pointing into input);
// throws a system error (ENOSYS, "seccomp") where no filter exists.
void PrepareSandbox(Napi::Env env, SandboxInput* input);

// sandboxSupport() → { landlockAbi: number, seccompFilter: boolean,
//   readOnlyView: "available" | "user-namespace" | "kernel" | "privilege" }
Napi::Value SandboxSupportOf(const Napi::CallbackInfo& info);

// sandboxFilter({ arch: "x86_64" | "aarch64", network, execWritable }) → the
// program the child would install on that architecture.
Napi::Value SandboxFilterOf(const Napi::CallbackInfo& info);

}  // namespace exactspawn
