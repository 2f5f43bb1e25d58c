// contain_binding.h — marshalling only, for contained steps (core/cgroup.h).
//   probeContainment() → { mount: string, own: string } | { errno, syscall: null }
//     where the host stands in the cgroup v2 hierarchy (a plain value, never
//     thrown: -ENOENT when there is no cgroup2 or no v2 path).
//   spawn's and spawnSync's `contain?: { parent: string, limits?: [controller,
//     file, value][] }`: the parent directory (absolute, no NUL or newline)
//     and the limits TypeScript chose; read and checked here (TypeError),
//     made by MakeContainment once every other check has passed.
#pragma once

#include <napi.h>

#include <string>
#include <vector>

#include "core/cgroup.h"

namespace exactspawn {

struct ContainInput {
  std::string parent;
  std::vector<std::string> strings;  // controller, file, value per limit
  std::vector<CgroupLimit> limits;   // point into strings (filled by MakeContainment)
};

// false when options.contain is undefined.
bool ReadContain(Napi::Env env, Napi::Object options, ContainInput* input);

// Makes the step's cgroup; throws a system error (step "contain", the path
// that failed) when it cannot.
void MakeContainment(Napi::Env env, ContainInput* input, StepCgroup* out);

Napi::Value ProbeContainment(const Napi::CallbackInfo& info);

}  // namespace exactspawn
