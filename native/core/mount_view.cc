// mount_view.cc — see mount_view.h.
#include "mount_view.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>

namespace exactspawn {

namespace {

// Fixed by the kernel's ABI, the same numbers on every architecture (the
// unified table since Linux 5.1); this toolchain's headers may predate them.
constexpr long kOpenTree = 428;
constexpr long kMoveMount = 429;
constexpr long kOpenat2 = 437;
constexpr long kMountSetattr = 442;
constexpr unsigned kOpenTreeClone = 1;                 // OPEN_TREE_CLONE
constexpr unsigned kOpenTreeCloexec = O_CLOEXEC;       // OPEN_TREE_CLOEXEC
constexpr unsigned kAtRecursive = 0x8000;              // AT_RECURSIVE
constexpr unsigned kAtEmptyPath = 0x1000;              // AT_EMPTY_PATH
constexpr unsigned kMoveMountFEmptyPath = 0x00000004;  // MOVE_MOUNT_F_EMPTY_PATH
constexpr unsigned kMoveMountTEmptyPath = 0x00000040;  // MOVE_MOUNT_T_EMPTY_PATH
constexpr uint64_t kMountAttrRdonly = 0x00000001;      // MOUNT_ATTR_RDONLY
constexpr uint64_t kMountAttrNosuid = 0x00000002;      // MOUNT_ATTR_NOSUID
constexpr uint64_t kMountAttrNodev = 0x00000004;       // MOUNT_ATTR_NODEV
constexpr uint64_t kResolveNoSymlinks = 0x04;          // RESOLVE_NO_SYMLINKS
constexpr int kCapSysAdmin = 21;

struct MountAttr {  // struct mount_attr, MOUNT_ATTR_SIZE_VER0
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

struct OpenHow {  // struct open_how
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};

bool has_call(long number, long a, long b, long c, long d, long e) {
  return syscall(number, a, b, c, d, e) >= 0 || errno != ENOSYS;
}

// Runs on the child's borrowed stack: never instrumented (see child_path.cc).
__attribute__((no_sanitize_address)) void close_fds(int* fds, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (fds[i] >= 0) syscall(SYS_close, fds[i]);
    fds[i] = -1;
  }
}

// Writes `text` into a /proc file of the calling task. 0 or -errno.
__attribute__((no_sanitize_address)) int write_proc(const char* path, const char* text) {
  size_t length = 0;
  while (text[length] != '\0') ++length;
  long fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  long n = syscall(SYS_write, fd, text, length);
  int err = n < 0 ? -errno : (static_cast<size_t>(n) != length ? -EIO : 0);
  syscall(SYS_close, fd);
  return err;
}

__attribute__((no_sanitize_address)) int enter_namespaces(const MountView& view,
                                                          const char** name) {
  *name = "unshare";
  if (syscall(SYS_unshare, CLONE_NEWNS | (view.user_namespace ? CLONE_NEWUSER : 0)) != 0) {
    return -errno;
  }
  if (view.user_namespace) {
    *name = "write";
    if (int err = write_proc("/proc/self/setgroups", "deny"); err != 0) return err;
    if (int err = write_proc("/proc/self/uid_map", view.uid_map); err != 0) return err;
    if (int err = write_proc("/proc/self/gid_map", view.gid_map); err != 0) return err;
  }
  *name = "mount";
  if (syscall(SYS_mount, nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return -errno;
  return 0;
}

// Whether a forked child of a host without CAP_SYS_ADMIN can make the view
// through a user namespace (a kernel or a policy may refuse unprivileged
// user namespaces, or the capabilities in them).
bool user_namespace_works() {
  char uid_map[32];
  char gid_map[32];
  snprintf(uid_map, sizeof uid_map, "%u %u 1\n", geteuid(), geteuid());
  snprintf(gid_map, sizeof gid_map, "%u %u 1\n", getegid(), getegid());
  pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    MountView view;
    view.user_namespace = true;
    view.uid_map = uid_map;
    view.gid_map = gid_map;
    const char* name = nullptr;
    MountAttr attr = {kMountAttrRdonly, 0, 0, 0};
    if (enter_namespaces(view, &name) != 0 ||
        syscall(kMountSetattr, AT_FDCWD, "/", kAtRecursive, &attr, sizeof attr) != 0) {
      _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

MountViewUnavailable probe_mount_view() {
  // Arguments each kernel that has the call refuses before doing anything:
  // an unknown flag, a zero size.
  const bool calls =
      has_call(kOpenTree, -1, 0, ~0L, 0, 0) && has_call(kMoveMount, -1, 0, -1, 0, ~0L) &&
      has_call(kMountSetattr, -1, 0, ~0L, 0, 0) && has_call(kOpenat2, -1, 0, 0, 0, 0);
  if (!calls) return MountViewUnavailable::kKernel;
  struct {
    uint32_t version;
    int pid;
  } header = {0x20080522, 0};  // _LINUX_CAPABILITY_VERSION_3
  struct {
    uint32_t effective, permitted, inheritable;
  } data[2] = {};
  if (syscall(SYS_capget, &header, data) == 0 && (data[0].effective & (1U << kCapSysAdmin)) != 0) {
    return MountViewUnavailable::kNone;
  }
  return user_namespace_works() ? MountViewUnavailable::kUserNamespace
                                : MountViewUnavailable::kPrivilege;
}

__attribute__((no_sanitize_address)) int apply_mount_view(const MountView& view,
                                                          const char** name) {
  if (int err = enter_namespaces(view, name); err != 0) return err;
  const size_t count = view.writable_count;
  int* targets = view.fds;
  int* trees = view.fds + count;
  for (size_t i = 0; i < 2 * count; ++i) view.fds[i] = -1;
  int err = 0;
  // Opened in the new namespace, so each fd names its mount there; a link
  // swapped in since the parent resolved the path fails with ELOOP.
  for (size_t i = 0; err == 0 && i < count; ++i) {
    OpenHow how = {O_PATH | O_CLOEXEC, 0, kResolveNoSymlinks};
    long fd = syscall(kOpenat2, AT_FDCWD, view.writable[i], &how, sizeof how);
    if (fd < 0) {
      *name = "openat2";
      err = -errno;
      break;
    }
    targets[i] = static_cast<int>(fd);
    fd = syscall(kOpenTree, targets[i], "",
                 kOpenTreeClone | kOpenTreeCloexec | kAtRecursive | kAtEmptyPath);
    if (fd < 0) {
      *name = "open_tree";
      err = -errno;
      break;
    }
    trees[i] = static_cast<int>(fd);
    // Setid bits and device nodes beneath a writable path are inert in the
    // view, whoever made them (a process entering this mount namespace
    // without no_new_privs included). A writable path that is itself a
    // device (/dev/null listed) keeps working: nosuid only there.
    struct stat st;
    const bool device =
        syscall(SYS_fstat, targets[i], &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode));
    MountAttr inert = {kMountAttrNosuid | (device ? 0 : kMountAttrNodev), 0, 0, 0};
    if (syscall(kMountSetattr, trees[i], "", kAtEmptyPath | kAtRecursive, &inert, sizeof inert) !=
        0) {
      *name = "mount_setattr";
      err = -errno;
      break;
    }
  }
  if (err == 0) {
    MountAttr attr = {kMountAttrRdonly, 0, 0, 0};
    if (syscall(kMountSetattr, AT_FDCWD, "/", kAtRecursive, &attr, sizeof attr) != 0) {
      *name = "mount_setattr";
      err = -errno;
    }
  }
  // Back onto its path, above the now read-only mount. A writable path
  // beneath another one lands under that one's clone, which already holds it
  // writable.
  for (size_t i = 0; err == 0 && i < count; ++i) {
    if (syscall(kMoveMount, trees[i], "", targets[i], "",
                kMoveMountFEmptyPath | kMoveMountTEmptyPath) != 0) {
      *name = "move_mount";
      err = -errno;
    }
  }
  close_fds(view.fds, 2 * count);
  if (err == 0 && view.cwd != nullptr) syscall(SYS_chdir, view.cwd);
  return err;
}

}  // namespace exactspawn
