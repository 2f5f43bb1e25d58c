// exec_controls_binding.h — marshalling only: reads the optional `controls`
// object of spawn's options into core/child_path.h's ExecControls.
//   controls?: { uid?: int, gid?: int, groups?: int[], umask?: int,
//                rlimits?: [name: string, soft: number, hard: number][],
//                nice?: int, noNewPrivileges?: boolean,
//                parentDeathSignal?: int }
// Ids are 0..2^32-2, umask 0..0o7777, nice -20..19, limits whole numbers or
// Infinity (RLIM_INFINITY), names as core/resource_limits.h knows them. Any
// other type or value throws a TypeError naming the field; nothing is coerced.
#pragma once

#include <napi.h>
#include <sys/types.h>

#include <vector>

#include "core/child_path.h"

namespace exactspawn {

struct ExecControlsInput {
  ExecControls controls;
  std::vector<gid_t> groups;
  std::vector<ResourceLimit> limits;
};

// false when options.controls is undefined: the caller may use posix_spawn.
bool ReadExecControls(Napi::Env env, Napi::Object options, ExecControlsInput* input);

}  // namespace exactspawn
