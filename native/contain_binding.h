// contain_binding.h — marshalling only, for contained steps (core/cgroup.h).
//   probeContainment() → { mount: string, own: string } | { errno, syscall: null }
//     where the host stands in the cgroup v2 hierarchy (a plain value, never
//     thrown: -ENOENT when there is no cgroup2 or no v2 path).
//   probePidNamespace() → { works: boolean, userNamespace: boolean,
//     errno?, code?, syscall? }: whether a contained step can run in a PID
//     namespace of its own (core/pid_namespace.h), tried once by the helper.
//   spawn's and spawnSync's `contain?: { parent: string, limits?: [controller,
//     file, value][] } | { namespace: "pid" | "pid+user" }`: the parent
//     directory (absolute, no NUL or newline) and the limits TypeScript
//     chose, made by MakeContainment once every other check has passed; or
//     the PID namespace (and user namespace) the child is cloned into, PID 1
//     being the exec helper as its init. Read and checked here (TypeError).
#pragma once

#include <napi.h>

#include <string>
#include <vector>

#include "core/cgroup.h"
#include "core/child_path.h"

namespace exactspawn {

struct ContainInput {
  PidNamespace pid_namespace = PidNamespace::kNone;  // else the cgroup below
  std::string parent;
  std::vector<std::string> controllers;  // enabled in the host's sub-tree (contain.ts CONTROLLERS)
  std::vector<std::string> strings;      // controller, file, value per limit
  std::vector<CgroupLimit> limits;       // point into strings (filled by MakeContainment)
};

// false when options.contain is undefined.
bool ReadContain(Napi::Env env, Napi::Object options, ContainInput* input);

// Makes the step's cgroup; throws a system error (step "contain", the path
// that failed) when it cannot.
void MakeContainment(Napi::Env env, ContainInput* input, StepCgroup* out);

Napi::Value ProbeContainment(const Napi::CallbackInfo& info);
Napi::Value ProbePidNamespace(const Napi::CallbackInfo& info);

}  // namespace exactspawn
