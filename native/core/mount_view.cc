// mount_view.cc — see mount_view.h.
#include "mount_view.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace exactspawn {

namespace {

// Flags fixed by the kernel's ABI; this toolchain's headers may predate them.
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

// Runs on the child's borrowed stack: never instrumented (see child_path.cc).
__attribute__((no_sanitize_address)) void close_fds(int* fds, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (fds[i] >= 0) syscall(SYS_close, fds[i]);
    fds[i] = -1;
  }
}

// Writes `text` into a /proc file of the calling task. 0 or -errno with
// *name the call that failed ("openat" or "write") and *failed the file.
__attribute__((no_sanitize_address)) int write_proc(const char* path, const char* text,
                                                    const char** name, const char** failed) {
  size_t length = 0;
  while (text[length] != '\0') ++length;
  *failed = path;
  *name = "openat";
  long fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  *name = "write";
  long n = syscall(SYS_write, fd, text, length);
  int err = n < 0 ? -errno : (static_cast<size_t>(n) != length ? -EIO : 0);
  syscall(SYS_close, fd);
  return err;
}

__attribute__((no_sanitize_address)) int enter_namespaces(const MountView& view, const char** name,
                                                          const char** path) {
  *name = "unshare";
  if (syscall(SYS_unshare, CLONE_NEWNS | (view.user_namespace ? CLONE_NEWUSER : 0)) != 0) {
    return -errno;
  }
  if (view.user_namespace) {
    if (int err = write_proc("/proc/self/setgroups", "deny", name, path); err != 0) return err;
    if (int err = write_proc("/proc/self/uid_map", view.uid_map, name, path); err != 0) return err;
    if (int err = write_proc("/proc/self/gid_map", view.gid_map, name, path); err != 0) return err;
    *path = nullptr;
  }
  *name = "mount";
  if (syscall(SYS_mount, nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return -errno;
  return 0;
}

}  // namespace

int try_user_namespace_view() {
  char uid_map[32];
  char gid_map[32];
  id_map(geteuid(), uid_map);
  id_map(getegid(), gid_map);
  MountView view;
  view.user_namespace = true;
  view.uid_map = uid_map;
  view.gid_map = gid_map;
  const char* name = nullptr;
  const char* path = nullptr;
  if (int err = enter_namespaces(view, &name, &path); err != 0) return err;
  MountAttr attr = {kMountAttrRdonly, 0, 0, 0};
  if (syscall(kMountSetattr, AT_FDCWD, "/", kAtRecursive, &attr, sizeof attr) != 0) return -errno;
  return 0;
}

__attribute__((no_sanitize_address)) int apply_mount_view(const MountView& view, const char** name,
                                                          const char** path) {
  if (int err = enter_namespaces(view, name, path); err != 0) return err;
  // The calling task's PID namespace is the new proc's (proc(5)).
  if (view.fresh_proc &&
      syscall(SYS_mount, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    *name = "mount";
    *path = "/proc";
    return -errno;
  }
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
      *path = view.writable[i];
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

void id_map(unsigned id, char* map) {
  char digits[12];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + id % 10);
    id /= 10;
  } while (id > 0);
  size_t at = 0;
  for (int twice = 0; twice < 2; ++twice) {
    for (int i = count - 1; i >= 0; --i) map[at++] = digits[i];
    map[at++] = ' ';
  }
  map[at++] = '1';
  map[at++] = '\n';
  map[at] = '\0';
}

}  // namespace exactspawn
