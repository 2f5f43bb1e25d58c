// sandbox.cc — see sandbox.h.
#include "sandbox.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "capabilities.h"
#include "seccomp_filter.h"

namespace exactspawn {

namespace {

// The uapi header of this toolchain predates several ABIs; the values are
// fixed by the kernel's ABI (include/uapi/linux/landlock.h).
constexpr uint64_t kExecute = 1ULL << 0;
constexpr uint64_t kWriteFile = 1ULL << 1;
constexpr uint64_t kReadFile = 1ULL << 2;
constexpr uint64_t kReadDir = 1ULL << 3;
constexpr uint64_t kRemoveDir = 1ULL << 4;
constexpr uint64_t kRemoveFile = 1ULL << 5;
constexpr uint64_t kMakeChar = 1ULL << 6;
constexpr uint64_t kMakeDir = 1ULL << 7;
constexpr uint64_t kMakeReg = 1ULL << 8;
constexpr uint64_t kMakeSock = 1ULL << 9;
constexpr uint64_t kMakeFifo = 1ULL << 10;
constexpr uint64_t kMakeBlock = 1ULL << 11;
constexpr uint64_t kMakeSym = 1ULL << 12;
constexpr uint64_t kRefer = 1ULL << 13;     // ABI 2
constexpr uint64_t kTruncate = 1ULL << 14;  // ABI 3
constexpr uint64_t kIoctlDev = 1ULL << 15;  // ABI 5
constexpr uint64_t kBindTcp = 1ULL << 0;    // ABI 4, handled_access_net
constexpr uint64_t kConnectTcp = 1ULL << 1;
constexpr uint64_t kScopeAbstractUnix = 1ULL << 0;  // ABI 6, scoped
constexpr uint64_t kScopeSignal = 1ULL << 1;
constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;
constexpr uint64_t kResolveNoSymlinks = 0x04;  // RESOLVE_NO_SYMLINKS

// The ruleset attribute as ABI 6 knows it; older kernels take a prefix.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;
constexpr uint64_t kRead = kReadFile | kReadDir;
constexpr uint64_t kWrite = kWriteFile | kRemoveDir | kRemoveFile | kMakeDir | kMakeReg | kMakeSym |
                            kMakeFifo | kMakeSock | kRefer | kTruncate;

// Devices every shell writes to: `> /dev/null` needs write and truncate.
constexpr const char* kWritableDevices[] = {"/dev/null", "/dev/zero", "/dev/full"};

uint64_t handled_fs(int abi) {
  uint64_t rights = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir | kRemoveFile |
                    kMakeChar | kMakeDir | kMakeReg | kMakeSock | kMakeFifo | kMakeBlock | kMakeSym;
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  if (abi >= 5) rights |= kIoctlDev;
  return rights;
}

// Runs in the exec helper before the target's exec: raw calls only (the
// steps of child_steps.h are async-signal-safe). The paths come resolved (no
// symbolic link in them, see src/spawn/sandbox-paths.ts): a link swapped in
// since, e.g. by a sandboxed step running meanwhile, fails with ELOOP instead
// of moving the rule. openat2(2) RESOLVE_NO_SYMLINKS (Linux 5.6); before it,
// open(2).
__attribute__((no_sanitize_address)) long open_resolved(const char* path) {
  struct {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
  } how = {O_PATH | O_CLOEXEC, 0, kResolveNoSymlinks};
  long fd = syscall(kOpenat2, AT_FDCWD, path, &how, sizeof how);
  if (fd >= 0 || errno != ENOSYS) return fd;
  return syscall(SYS_openat, AT_FDCWD, path, O_PATH | O_CLOEXEC);
}

// 0, or -errno (*failed_path = path).
__attribute__((no_sanitize_address)) int add_rule(int ruleset, const char* path, uint64_t access,
                                                  uint64_t handled, const char** failed_path) {
  long fd = open_resolved(path);
  if (fd < 0) {
    *failed_path = path;
    return -errno;
  }
  struct stat st {};
  if (syscall(SYS_fstat, fd, &st) < 0) {
    int err = -errno;
    syscall(SYS_close, fd);
    *failed_path = path;
    return err;
  }
  // A file takes only the rights that apply to files (EINVAL otherwise).
  if (!S_ISDIR(st.st_mode)) access &= kFileRights;
  PathBeneathAttr attr{access & handled, static_cast<int32_t>(fd)};
  long r = attr.allowed_access == 0
               ? 0
               : syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &attr, 0);
  int err = r < 0 ? -errno : 0;
  syscall(SYS_close, fd);
  if (err < 0) *failed_path = path;
  return err;
}

}  // namespace

SandboxSupport probe_sandbox() {
  SandboxSupport support;
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  support.landlock_abi = abi > 0 ? static_cast<int>(abi) : 0;
  // PR_GET_SECCOMP fails with EINVAL when the kernel lacks CONFIG_SECCOMP.
  FilterArch arch;
  support.seccomp_filter = native_filter_arch(&arch) && prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  return support;
}

__attribute__((no_sanitize_address)) int build_ruleset(const LandlockRules& spec,
                                                       const char** syscall_name,
                                                       const char** failed_path) {
  *syscall_name = "landlock_create_ruleset";
  *failed_path = nullptr;
  long version = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (version < 1) return version < 0 ? -errno : -EOPNOTSUPP;
  const int abi = static_cast<int>(version);
  RulesetAttr attr{handled_fs(abi), 0, 0};
  size_t size = sizeof attr.handled_access_fs;
  if (abi >= 4) {
    size += sizeof attr.handled_access_net;
    if (!spec.network) attr.handled_access_net = kBindTcp | kConnectTcp;
  }
  if (abi >= 6) {
    size += sizeof attr.scoped;
    attr.scoped = kScopeSignal | (spec.network ? 0 : kScopeAbstractUnix);
  }
  long ruleset = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0) return -errno;
  int fd = static_cast<int>(ruleset);
  *syscall_name = "landlock_add_rule";
  const uint64_t handled = attr.handled_access_fs;
  int err = 0;
  const uint64_t exec_on_write = spec.exec_writable ? kExecute : 0;
  if (spec.read_all) err = add_rule(fd, "/", kRead, handled, failed_path);
  for (size_t i = 0; err == 0 && !spec.read_all && i < spec.read_count; ++i) {
    err = add_rule(fd, spec.read[i], kRead, handled, failed_path);
  }
  for (size_t i = 0; err == 0 && i < spec.exec_count; ++i) {
    err = add_rule(fd, spec.exec[i], kRead | kExecute, handled, failed_path);
  }
  for (size_t i = 0; err == 0 && i < spec.write_count; ++i) {
    err = add_rule(fd, spec.write[i], kRead | kWrite | exec_on_write, handled, failed_path);
  }
  for (const char* device : kWritableDevices) {
    if (err != 0) break;
    err =
        add_rule(fd, device, kReadFile | kWriteFile | kTruncate | kIoctlDev, handled, failed_path);
  }
  if (err < 0) {
    syscall(SYS_close, fd);
    return err;
  }
  return fd;
}

__attribute__((no_sanitize_address)) int drop_bounding_set() {
  CapHeader header = {kCapabilityVersion3, 0};
  CapData data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return -1;
  if ((data[0].effective & (1U << kCapSetpcap)) == 0) return 0;
  for (int cap = 0; cap < 64; ++cap) {
    if (syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;  // past the kernel's last capability
      return -1;
    }
  }
  return 0;
}

__attribute__((no_sanitize_address)) int drop_capabilities(const char** name) {
  *name = "prctl";
  if (syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 &&
      errno != EINVAL) {  // EINVAL: a kernel before 4.3, which has no ambient set
    return -errno;
  }
  *name = "capset";
  CapHeader header = {kCapabilityVersion3, 0};
  CapData data[2] = {};
  if (syscall(SYS_capset, &header, data) != 0) return -errno;
  return 0;
}

__attribute__((no_sanitize_address)) int apply_sandbox(const SandboxPlan& plan,
                                                       const char** syscall_name,
                                                       const char** path) {
  *path = nullptr;
  *syscall_name = "prctl";
  if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return -errno;
  }
  if (plan.landlock != nullptr) {
    int ruleset = build_ruleset(*plan.landlock, syscall_name, path);
    if (ruleset < 0) return ruleset;
    *syscall_name = "landlock_restrict_self";
    long r = syscall(SYS_landlock_restrict_self, ruleset, 0);
    int err = r != 0 ? -errno : 0;
    syscall(SYS_close, ruleset);
    if (err != 0) return err;
  }
  *syscall_name = "seccomp";
  if (plan.filter != nullptr &&
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, plan.filter) != 0) {
    return -errno;
  }
  return 0;
}

}  // namespace exactspawn
