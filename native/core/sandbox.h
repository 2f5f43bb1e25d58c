// sandbox.h — confines a child before exec: Landlock for the file system
// (and TCP where the ABI has it), the seccomp filter of seccomp_filter.h,
// both after PR_SET_NO_NEW_PRIVS.
//
// Parent side (may allocate): probe what the kernel can enforce, and build a
// Landlock ruleset fd from the host's intent (paths opened with O_PATH).
// Child side (between clone and exec; async-signal-safe, raw syscalls, no
// allocator): apply_sandbox() restricts the calling task; every descendant
// inherits the restriction across fork and exec.
// See landlock(7), landlock_create_ruleset(2), landlock_add_rule(2),
// landlock_restrict_self(2), seccomp(2), prctl(2) PR_SET_NO_NEW_PRIVS.
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

#include "mount_view.h"

namespace exactspawn {

// What the host asked for; paths are absolute.
struct SandboxSpec {
  bool read_all = true;            // read (files and directories) everywhere
  std::vector<std::string> read;   // else: only beneath these
  std::vector<std::string> write;  // create, write, remove, rename beneath these
  std::vector<std::string> exec;   // execute files beneath these
  bool exec_writable = false;      // also execute files beneath `write`
  bool network = false;            // false: no socket but AF_UNIX, no TCP
};

// What this kernel can enforce.
struct SandboxSupport {
  int landlock_abi = 0;         // 0: no Landlock (or disabled)
  bool seccomp_filter = false;  // seccomp is there and a filter exists for this arch
};

SandboxSupport probe_sandbox();

// Builds the Landlock ruleset for `spec` under ABI `abi` (>= 1). Returns the
// ruleset fd (O_CLOEXEC) or -errno; on a path's failure, *failed_path names it.
int build_ruleset(const SandboxSpec& spec, int abi, std::string* failed_path);

// What the child applies (child_steps.h gives the order): the read-only mount
// view (if mount_view is non-null; mount_view.h, before anything that drops
// privileges), the capability bounding set emptied (if drop_capabilities,
// before the credential change), then apply_sandbox(): no_new_privs, the
// Landlock ruleset (if ruleset_fd >= 0), the filter (if non-null).
struct SandboxPlan {
  int ruleset_fd = -1;
  const struct sock_fprog* filter = nullptr;
  bool drop_capabilities = false;
  const MountView* mount_view = nullptr;
};

// Which step of apply_sandbox() failed.
enum class SandboxStep { kNone = 0, kNoNewPrivs, kBoundingSet, kLandlock, kSeccomp };

// Async-signal-safe. Returns 0 or -errno and sets *failed.
int apply_sandbox(const SandboxPlan& plan, SandboxStep* failed);

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
