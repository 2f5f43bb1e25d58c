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

// Why the view cannot be made on this host, or kNone.
enum class MountViewUnavailable { kNone = 0, kKernel, kPrivilege };

// Whether open_tree, move_mount, mount_setattr and openat2 exist (each is
// called with arguments every kernel that has it refuses with EINVAL or
// EBADF) and the calling thread holds CAP_SYS_ADMIN in its user namespace.
MountViewUnavailable probe_mount_view();

// What the child applies: paths are absolute real paths (no symbolic link in
// them; see src/spawn/sandbox-paths.ts), NUL-terminated, prepared by the
// parent. `fds` has room for 2 * writable_count descriptors (the child's
// scratch: on the shared-memory path it is the parent's memory, written only
// while the parent is suspended).
struct MountView {
  const char* const* writable = nullptr;
  size_t writable_count = 0;
  int* fds = nullptr;
};

// Async-signal-safe. In this order: unshare(CLONE_NEWNS); "/" made
// recursively private (nothing propagates back to the host's namespace);
// each writable path opened without following symbolic links (openat2
// RESOLVE_NO_SYMLINKS, in the new namespace) and its tree cloned
// (open_tree OPEN_TREE_CLONE | AT_RECURSIVE), its mounts' flags as they are;
// every mount beneath "/" made read-only (mount_setattr AT_RECURSIVE); each
// clone moved back onto its path (move_mount). Returns 0, or -errno with
// *syscall naming the call that failed.
int apply_mount_view(const MountView& view, const char** syscall);

}  // namespace exactspawn
