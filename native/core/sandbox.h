// sandbox.h — confines a child before exec: Landlock for the file system
// (and TCP where the ABI has it), the seccomp filter of seccomp_filter.h,
// both after PR_SET_NO_NEW_PRIVS.
//
// Parent side: probe what the kernel can enforce. Child side (the exec
// helper, before the target's exec; async-signal-safe, raw syscalls, no
// allocator): apply_sandbox() builds the Landlock ruleset from the plan's
// paths (each opened with O_PATH there: in the child's own mount namespace,
// with its own credentials) and restricts the calling task; every descendant
// inherits the restriction across fork and exec.
// See landlock(7), landlock_create_ruleset(2), landlock_add_rule(2),
// landlock_restrict_self(2), seccomp(2), prctl(2) PR_SET_NO_NEW_PRIVS.
#pragma once

#include <linux/filter.h>

#include <cstddef>

#include "mount_view.h"

namespace exactspawn {

// The Landlock rules the host asked for: absolute real paths (no symbolic
// link in them, see src/spawn/sandbox-paths.ts), NUL-terminated.
struct LandlockRules {
  bool read_all = true;               // read (files and directories) everywhere
  const char* const* read = nullptr;  // else: only beneath these
  size_t read_count = 0;
  const char* const* write = nullptr;  // create, write, remove, rename beneath these
  size_t write_count = 0;
  const char* const* exec = nullptr;  // execute files beneath these
  size_t exec_count = 0;
  bool exec_writable = false;  // also execute files beneath `write`
  bool network = false;        // false: no TCP bind/connect, abstract sockets scoped
};

// What this kernel can enforce.
struct SandboxSupport {
  int landlock_abi = 0;         // 0: no Landlock (or disabled)
  bool seccomp_filter = false;  // seccomp is there and a filter exists for this arch
};

SandboxSupport probe_sandbox();

// Async-signal-safe. Builds the Landlock ruleset for `spec` under the running
// kernel's ABI: each path opened with O_PATH and RESOLVE_NO_SYMLINKS (openat2,
// Linux 5.6; plain open before it), so a link swapped in since the host
// resolved it fails with ELOOP instead of moving the rule. Returns the
// ruleset fd (O_CLOEXEC), or -errno with *syscall naming the call
// ("landlock_create_ruleset", or "landlock_add_rule" for a path's open, fstat
// or rule) and *path the path (nullptr for the ruleset itself).
int build_ruleset(const LandlockRules& spec, const char** syscall, const char** path);

// What the child applies (child_steps.h gives the order): the read-only mount
// view (if mount_view is non-null; mount_view.h, before anything that drops
// privileges), the capability bounding set emptied (if drop_capabilities,
// before the credential change), then apply_sandbox(): no_new_privs, the
// Landlock ruleset built and applied (if landlock is non-null), the filter
// (if non-null).
struct SandboxPlan {
  const LandlockRules* landlock = nullptr;
  const struct sock_fprog* filter = nullptr;
  bool drop_capabilities = false;
  const MountView* mount_view = nullptr;
};

// Async-signal-safe. Returns 0, or -errno with *syscall naming the call that
// failed ("prctl", build_ruleset()'s, "landlock_restrict_self", "seccomp")
// and *path the path it failed on (nullptr when none).
int apply_sandbox(const SandboxPlan& plan, const char** syscall, const char** path);

// Async-signal-safe: empties the bounding set when the calling task may
// (CAP_SETPCAP). Without it the task holds no capability worth keeping from
// an exec anyway: no_new_privs caps what an exec grants at what it already
// permits, and drop_capabilities() empties that. 0, or -1 with errno set.
int drop_bounding_set();

// Async-signal-safe; called after the credential change (which needs
// CAP_SETUID/CAP_SETGID) when plan.drop_capabilities: clears the ambient set
// (PR_CAP_AMBIENT_CLEAR_ALL) and the effective, permitted and inheritable
// sets (capset(2)). With no_new_privs and an empty bounding set, no exec gives
// any back, a uid-0 exec included (capabilities(7), "Transformation of
// capabilities during execve()"). Returns 0 or -errno; *syscall names the call.
int drop_capabilities(const char** syscall);

}  // namespace exactspawn
