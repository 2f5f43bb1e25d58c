// mount_view.h — the read-only mount view of a sandboxed child: a private
// mount namespace in which every mount is read-only except the sandbox's
// writable paths. Landlock has no right for permission bits, times, owners or
// extended attributes; a read-only mount refuses all of them (EROFS), so the
// view covers what Landlock cannot, outside `writable`.
//
// Parent side (may allocate): probe whether this host can make the view.
// Child side (between clone and exec; async-signal-safe, raw syscalls, no
// allocator): apply_mount_view() in the calling task, before Landlock, the
// filter and the credential change (it needs CAP_SYS_ADMIN).
// See unshare(2) CLONE_NEWNS, mount_namespaces(7), mount(2) MS_PRIVATE,
// open_tree(2) (Linux 5.2), move_mount(2) (5.2), mount_setattr(2) (5.12),
// openat2(2) RESOLVE_NO_SYMLINKS (5.6).
#pragma once

#include <cstddef>

namespace exactspawn {

// System call numbers fixed by the kernel's ABI, the same on every
// architecture (the unified table since Linux 5.1); this toolchain's headers
// may predate them.
constexpr long kOpenTree = 428;
constexpr long kMoveMount = 429;
constexpr long kOpenat2 = 437;
constexpr long kMountSetattr = 442;

// How the view can be made on this host: kNone through a mount namespace
// alone (the host holds CAP_SYS_ADMIN), kUserNamespace with a user namespace
// too (a host that does not: the child maps its own uid and gid to
// themselves and holds capabilities over its own mounts only); else why not.
enum class MountViewUnavailable { kNone = 0, kUserNamespace, kKernel, kPrivilege };

// Whether open_tree, move_mount, mount_setattr and openat2 exist (each is
// called with arguments every kernel that has it refuses with EINVAL or
// EBADF) and the calling thread holds CAP_SYS_ADMIN in its user namespace;
// without it, the exec helper tries the user-namespace way in a probe mode
// (try_user_namespace_view) and reports whether it worked. The host never
// forks; call once (the library caches the answer). In mount_view_probe.cc.
MountViewUnavailable probe_mount_view();

// The user-namespace way, in the calling process (the helper's probe mode):
// unshare, the id maps (its own euid and egid), a private and read-only "/".
// 0 or -errno. Leaves the caller in the new namespaces.
int try_user_namespace_view();

// What the child applies: paths are absolute real paths (no symbolic link in
// them; see src/spawn/sandbox-paths.ts), NUL-terminated, prepared by the
// parent. `fds` has room for 2 * writable_count descriptors (the helper's
// scratch, allocated when it reads its plan).
struct MountView {
  const char* const* writable = nullptr;
  size_t writable_count = 0;
  int* fds = nullptr;
  // A user namespace as well (CLONE_NEWUSER): in the exec helper, which
  // does not share the host's memory (the new namespace's capabilities would
  // mark a shared mm non-dumpable, see child_path.h). The maps are "ID ID 1\n" with
  // the host's effective uid and gid.
  bool user_namespace = false;
  const char* uid_map = nullptr;
  const char* gid_map = nullptr;
  // A fresh proc mounted on /proc (read-only with the rest), so /proc shows
  // the PID namespace the child runs in (a contained step's, see
  // helper/init.h); the helper sets it, the host never does.
  bool fresh_proc = false;
  // The host's working directory, entered again once the view is made (the
  // child's would otherwise stay on the copy of the mount beneath a writable
  // path's clone, read-only); nullptr when unknown.
  const char* cwd = nullptr;
};

// Async-signal-safe. In this order: unshare(CLONE_NEWNS) (with
// CLONE_NEWUSER when view.user_namespace, then "deny" written to
// /proc/self/setgroups and the two maps, user_namespaces(7)); "/" made
// recursively private (nothing propagates back to the host's namespace);
// with fresh_proc, a new proc mounted on /proc (nosuid, nodev, noexec);
// each writable path opened without following symbolic links (openat2
// RESOLVE_NO_SYMLINKS, in the new namespace) and its tree cloned
// (open_tree OPEN_TREE_CLONE | AT_RECURSIVE), its mounts' flags as they are
// plus nosuid and nodev (mount_setattr AT_RECURSIVE on the clone; nosuid only
// where the path is itself a device);
// every mount beneath "/" made read-only (mount_setattr AT_RECURSIVE); each
// clone moved back onto its path (move_mount); the working directory entered
// again by path (a failure there keeps the old one). Returns 0, or -errno with
// *syscall naming the call that failed and *path the file it failed on (a
// /proc file of the id maps, a writable path; nullptr for the others).
int apply_mount_view(const MountView& view, const char** syscall, const char** path);

// "ID ID 1\n" into map (at least 32 bytes): a one-line uid_map or gid_map
// that maps `id` to itself. No allocator, no stdio (the helper has none).
void id_map(unsigned id, char* map);

}  // namespace exactspawn
