// helper_plan.h — the one message from the host to the exec helper
// (native/helper/main.cc): a fixed-layout header followed by the bytes its
// offsets point into, written by the host into a sealed memfd the helper
// inherits. It carries everything the target steps need (child_steps.h): the
// target's file, argv, envp and cwd; the exec controls (rlimits, nice, umask,
// groups/gid/uid, parent-death signal and the host's pid, no_new_privs); the
// PID namespace of a contained step (the helper is then its init, and maps
// the ids of its user namespace); the
// sandbox pieces (the seccomp program, the capability drop, the mount view's
// paths, id maps and working directory, and the Landlock rules' paths, from
// which the helper builds the ruleset itself).
//
// Versioned: `version` names the layout, `flags` holds optional parts a later
// helper may understand (an unknown flag bit is refused, so a host never
// believes a step ran that an older helper skipped). Host and helper are
// built from the same sources for the same architecture.
//
// encode_plan() runs in the host (allocates); decode_plan() in the helper
// (its own process: it may allocate with malloc).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "child_path.h"
#include "mount_view.h"
#include "sandbox.h"
#include "spawn_process.h"

namespace exactspawn {

constexpr uint32_t kPlanMagic = 0x58485350;  // "PSHX"
constexpr uint32_t kPlanVersion = 4;
constexpr uint32_t kPlanKnownFlags = 0;

enum class PlanMode : uint32_t {
  kRun = 0,                     // the target steps, then the target's exec
  kProbeUserNamespaceView = 1,  // try a user-namespace mount view, exit 0 (works) or 1
  kProbePidNamespace = 2,       // started as a PID namespace's init: exit 0
};

// Offsets are from the start of the plan; 0 means absent.
struct PlanHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t flags;
  uint32_t size;  // of the whole plan
  uint32_t mode;  // PlanMode
  int32_t parent;
  // The target.
  uint32_t file, cwd;
  uint32_t argv, argc;  // argc NUL-terminated strings, back to back
  uint32_t envp, envc;
  uint32_t new_session, new_process_group;  // for the record; the vfork child ran them
  // Exec controls.
  uint32_t set_uid, uid, set_gid, gid;
  uint32_t set_groups, groups, group_count;  // gid_t[group_count]
  int32_t umask;
  uint32_t limits, limit_count;  // ResourceLimit[limit_count]
  uint32_t set_nice;
  int32_t nice;
  uint32_t no_new_privs;
  int32_t parent_death_signal;
  // A contained step's PID namespace (PidNamespace): the helper is its init.
  // With a user namespace (kPidAndUser), the ids the helper maps in it
  // ("ID ID 1\n", the host's own; child_steps.h map_user_namespace).
  uint32_t pid_namespace;
  uint32_t namespace_uid_map, namespace_gid_map;
  // The sandbox (sandboxed == 0: none).
  uint32_t sandboxed, drop_capabilities;
  uint32_t filter, filter_length;  // struct sock_filter[filter_length]
  uint32_t view, view_user_namespace;
  uint32_t writable, writable_count;  // strings back to back
  uint32_t uid_map, gid_map, view_cwd;
  // The Landlock rules (landlock == 0: none); path lists back to back.
  uint32_t landlock, read_all, exec_writable, network;
  uint32_t read, read_count, write, write_count, exec, exec_count;
};

// The plan for `request` and `controls`. Returns 0 or -EINVAL (a count too
// large for the layout).
int encode_plan(const SpawnRequest& request, const ExecControls& controls, pid_t parent,
                PlanMode mode, std::vector<char>* out);

// What the helper runs, pointing into the plan's bytes.
struct DecodedPlan {
  PlanMode mode = PlanMode::kRun;
  pid_t parent = 0;
  // PidNamespace::kPidAndUser (in every mode): the maps of its user namespace.
  const char* namespace_uid_map = nullptr;
  const char* namespace_gid_map = nullptr;
  SpawnRequest request;
  ExecControls controls;
  SandboxPlan sandbox;
  MountView view;
  LandlockRules landlock;
  struct sock_fprog filter = {};
};

// Checks every offset, count and string of `bytes` (size bytes, 8-aligned)
// and fills *plan; the pointer arrays it needs are malloc'ed (never freed:
// the helper execs or exits). 0, or -EINVAL for a malformed plan, -ENOMEM.
int decode_plan(char* bytes, size_t size, DecodedPlan* plan);

}  // namespace exactspawn
