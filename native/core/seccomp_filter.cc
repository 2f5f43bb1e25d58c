// seccomp_filter.cc — see seccomp_filter.h.
#include "seccomp_filter.h"

#include <linux/audit.h>
#include <linux/seccomp.h>

#include <cerrno>
#include <cstdint>

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U  // Linux 4.14
#endif

namespace exactspawn {

namespace {

enum class Kind {
  kDeny,              // always refused
  kDenyIfAnyBit,      // refused when arg & a != 0
  kDenyUnlessAnyBit,  // refused when arg & a == 0
  kDenyIfEither,      // refused when arg == a or arg == b
  kDenyUnlessEqual,   // refused when arg != a
  kDenyIfBothBits,    // refused when arg & a != 0 and arg2 & b != 0
  kDenyUnlessBoth,    // refused unless arg == a and arg2 == b
  kNoSuchCall,        // always fails with ENOSYS, as on a kernel without it
};

enum class When { kAlways, kNoNetwork, kNoExecWritable };

// One refused call: its number on each ABI (-1: the ABI has no such call).
struct Call {
  int x86_64;
  int aarch64;
  Kind kind;
  int arg;  // which argument the condition reads
  uint32_t a;
  uint32_t b;
  When when;
  int arg2 = 0;  // the second argument kDenyIfBothBits reads
};

constexpr uint32_t kTiocsti = 0x5412;
constexpr uint32_t kTioclinux = 0x541C;
constexpr uint32_t kSetIdBits = 04000 | 02000;  // S_ISUID | S_ISGID
constexpr uint32_t kMfdNoexecSeal = 0x0008U;    // Linux 6.3
constexpr uint32_t kAfUnix = 1;
// Flags under which open/openat use their mode argument: O_CREAT and
// __O_TMPFILE (the same values on both ABIs, asm-generic/fcntl.h); without
// them the kernel ignores the mode (build_open_how in fs/open.c).
constexpr uint32_t kCreatingOpen = 0100 | 020000000;
constexpr uint32_t kPrioProcess = 0;       // PRIO_PROCESS (setpriority)
constexpr uint32_t kIoprioWhoProcess = 1;  // IOPRIO_WHO_PROCESS (ioprio_set)

// Numbers from arch/x86/entry/syscalls/syscall_64.tbl and
// include/uapi/asm-generic/unistd.h (arm64).
constexpr Call kCalls[] = {
    {16, 29, Kind::kDenyIfEither, 1, kTiocsti, kTioclinux, When::kAlways},  // ioctl
    {248, 217, Kind::kDeny, 0, 0, 0, When::kAlways},                        // add_key
    {249, 218, Kind::kDeny, 0, 0, 0, When::kAlways},                        // request_key
    {250, 219, Kind::kDeny, 0, 0, 0, When::kAlways},                        // keyctl
    {90, -1, Kind::kDenyIfAnyBit, 1, kSetIdBits, 0, When::kAlways},         // chmod
    {91, 52, Kind::kDenyIfAnyBit, 1, kSetIdBits, 0, When::kAlways},         // fchmod
    {268, 53, Kind::kDenyIfAnyBit, 2, kSetIdBits, 0, When::kAlways},        // fchmodat
    {452, 452, Kind::kDenyIfAnyBit, 2, kSetIdBits, 0, When::kAlways},       // fchmodat2
    {92, -1, Kind::kDeny, 0, 0, 0, When::kAlways},                          // chown
    {93, 55, Kind::kDeny, 0, 0, 0, When::kAlways},                          // fchown
    {94, -1, Kind::kDeny, 0, 0, 0, When::kAlways},                          // lchown
    {260, 54, Kind::kDeny, 0, 0, 0, When::kAlways},                         // fchownat
    {188, 5, Kind::kDeny, 0, 0, 0, When::kAlways},                          // setxattr
    {189, 6, Kind::kDeny, 0, 0, 0, When::kAlways},                          // lsetxattr
    {190, 7, Kind::kDeny, 0, 0, 0, When::kAlways},                          // fsetxattr
    {463, 463, Kind::kDeny, 0, 0, 0, When::kAlways},                        // setxattrat
    {197, 14, Kind::kDeny, 0, 0, 0, When::kAlways},                         // removexattr
    {198, 15, Kind::kDeny, 0, 0, 0, When::kAlways},                         // lremovexattr
    {199, 16, Kind::kDeny, 0, 0, 0, When::kAlways},                         // fremovexattr
    {466, 466, Kind::kDeny, 0, 0, 0, When::kAlways},                        // removexattrat
    {425, 425, Kind::kDeny, 0, 0, 0, When::kAlways},                        // io_uring_setup
    {319, 279, Kind::kDenyUnlessAnyBit, 1, kMfdNoexecSeal, 0, When::kNoExecWritable},  // memfd
    {41, 198, Kind::kDenyUnlessEqual, 0, kAfUnix, 0, When::kNoNetwork},                // socket
    {53, 199, Kind::kDenyUnlessEqual, 0, kAfUnix, 0, When::kNoNetwork},                // socketpair
    // Another process's limits (RLIMIT_CPU {1,1} on the host makes the kernel
    // SIGKILL it): only pid 0, the caller itself, which is what setrlimit and
    // getrlimit pass in glibc and musl. A caller naming its own pid is refused
    // too: the program is shared by every process of the sandbox, so it
    // cannot know one pid (docs/sandbox.md).
    {302, 261, Kind::kDenyUnlessEqual, 0, 0, 0, When::kAlways},  // prlimit64
    // Another process's scheduling, the same way: a same-uid step could
    // renice its host, make it SCHED_IDLE, pin it to one CPU or give it the
    // idle I/O class. Only the caller (pid/who 0); for setpriority and
    // ioprio_set only the per-process `which` too (a group or a user names
    // other processes, who 0 the caller's own group or uid). A thread named
    // by its tid (pthread_setaffinity_np, pthread_setschedparam) is refused.
    {141, 140, Kind::kDenyUnlessBoth, 0, kPrioProcess, 0, When::kAlways, 1},  // setpriority
    {142, 118, Kind::kDenyUnlessEqual, 0, 0, 0, When::kAlways},               // sched_setparam
    {144, 119, Kind::kDenyUnlessEqual, 0, 0, 0, When::kAlways},               // sched_setscheduler
    {314, 274, Kind::kDenyUnlessEqual, 0, 0, 0, When::kAlways},               // sched_setattr
    {203, 122, Kind::kDenyUnlessEqual, 0, 0, 0, When::kAlways},               // sched_setaffinity
    {251, 30, Kind::kDenyUnlessBoth, 0, kIoprioWhoProcess, 0, When::kAlways, 1},  // ioprio_set
    // Setid bits at creation: the mode is not masked by the umask, so these
    // plant a setuid file as surely as chmod. mkdir/mkdirat are not listed:
    // the kernel drops S_ISUID and S_ISGID from their mode (vfs_mkdir keeps
    // S_IRWXUGO | S_ISVTX; a directory's S_ISGID comes only from its parent).
    {133, -1, Kind::kDenyIfAnyBit, 1, kSetIdBits, 0, When::kAlways},                   // mknod
    {259, 33, Kind::kDenyIfAnyBit, 2, kSetIdBits, 0, When::kAlways},                   // mknodat
    {85, -1, Kind::kDenyIfAnyBit, 1, kSetIdBits, 0, When::kAlways},                    // creat
    {2, -1, Kind::kDenyIfBothBits, 1, kCreatingOpen, kSetIdBits, When::kAlways, 2},    // open
    {257, 56, Kind::kDenyIfBothBits, 2, kCreatingOpen, kSetIdBits, When::kAlways, 3},  // openat
    // openat2 keeps its mode inside a struct the filter cannot read: ENOSYS,
    // so callers fall back to openat as on a kernel before 5.6.
    {437, 437, Kind::kNoSuchCall, 0, 0, 0, When::kAlways},  // openat2
};
constexpr size_t kCallCount = sizeof kCalls / sizeof kCalls[0];

constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t kDenyAction = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
constexpr uint32_t kNoSuchCallAction = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);
constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS;
constexpr uint32_t kX32Bit = 0x40000000;
constexpr uint32_t kArchOffset = offsetof(struct seccomp_data, arch);
constexpr uint32_t kNrOffset = offsetof(struct seccomp_data, nr);

// The low 32 bits of args[i] (both ABIs are little endian).
constexpr uint32_t arg_offset(int i) {
  return static_cast<uint32_t>(offsetof(struct seccomp_data, args) + 8 * i);
}

constexpr size_t block_size(Kind kind) {
  switch (kind) {
    case Kind::kDeny:
      return 0;  // jumps straight to the shared deny
    case Kind::kNoSuchCall:
      return 1;
    case Kind::kDenyIfEither:
      return 5;
    case Kind::kDenyIfBothBits:
    case Kind::kDenyUnlessBoth:
      return 6;
    default:
      return 4;
  }
}

// Longest program: 5 head + per call 1 dispatch and its block + allow + deny.
constexpr size_t longest_program() {
  size_t n = 5 + 2;
  for (const Call& call : kCalls) n += 1 + block_size(call.kind);
  return n;
}
constexpr size_t kMaxInstructions = longest_program();
// Every jump then fits a classic-BPF offset (8 bits).
static_assert(kMaxInstructions <= 256, "the filter outgrew 8-bit jump offsets");

struct Program {
  struct sock_filter insns[kMaxInstructions];
  struct sock_fprog fprog;
};

bool applies(const Call& call, bool network, bool exec_writable) {
  if (call.when == When::kNoNetwork) return !network;
  if (call.when == When::kNoExecWritable) return !exec_writable;
  return true;
}

struct sock_filter stmt(uint16_t code, uint32_t k) {
  return {code, 0, 0, k};
}
struct sock_filter jump(uint16_t code, uint32_t k, size_t from, size_t to_true, size_t to_false) {
  return {code, static_cast<uint8_t>(to_true - from - 1), static_cast<uint8_t>(to_false - from - 1),
          k};
}

void build(Program* p, FilterArch arch, bool network, bool exec_writable) {
  const bool x86 = arch == FilterArch::kX86_64;
  size_t nr_of[kCallCount];
  size_t count = 0;
  for (size_t i = 0; i < kCallCount; ++i) {
    int nr = x86 ? kCalls[i].x86_64 : kCalls[i].aarch64;
    if (nr >= 0 && applies(kCalls[i], network, exec_writable)) nr_of[count++] = i;
  }
  const size_t head = x86 ? 5 : 4;
  const size_t allow_at = head + count;
  size_t blocks = 0;
  for (size_t j = 0; j < count; ++j) blocks += block_size(kCalls[nr_of[j]].kind);
  const size_t deny_at = allow_at + 1 + blocks;
  struct sock_filter* f = p->insns;
  size_t n = 0;
  f[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, kArchOffset);
  f[n] = jump(BPF_JMP | BPF_JEQ | BPF_K, x86 ? AUDIT_ARCH_X86_64 : AUDIT_ARCH_AARCH64, n, n + 2,
              n + 1);
  ++n;
  f[n++] = stmt(BPF_RET | BPF_K, kKill);
  f[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, kNrOffset);
  if (x86) {
    f[n] = jump(BPF_JMP | BPF_JSET | BPF_K, kX32Bit, n, deny_at, n + 1);
    ++n;
  }
  size_t block_at = allow_at + 1;
  for (size_t j = 0; j < count; ++j) {
    const Call& call = kCalls[nr_of[j]];
    const uint32_t nr = static_cast<uint32_t>(x86 ? call.x86_64 : call.aarch64);
    const size_t target = call.kind == Kind::kDeny ? deny_at : block_at;
    f[n] = jump(BPF_JMP | BPF_JEQ | BPF_K, nr, n, target, n + 1);
    ++n;
    block_at += block_size(call.kind);
  }
  f[n++] = stmt(BPF_RET | BPF_K, kAllow);
  for (size_t j = 0; j < count; ++j) {
    const Call& call = kCalls[nr_of[j]];
    if (call.kind == Kind::kDeny) continue;
    if (call.kind == Kind::kNoSuchCall) {
      f[n++] = stmt(BPF_RET | BPF_K, kNoSuchCallAction);
      continue;
    }
    f[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, arg_offset(call.arg));
    // Each block ends with "allow; deny" at n + k and n + k + 1.
    switch (call.kind) {
      case Kind::kDenyIfAnyBit:
        f[n] = jump(BPF_JMP | BPF_JSET | BPF_K, call.a, n, n + 2, n + 1);
        ++n;
        break;
      case Kind::kDenyUnlessAnyBit:
        f[n] = jump(BPF_JMP | BPF_JSET | BPF_K, call.a, n, n + 1, n + 2);
        ++n;
        break;
      case Kind::kDenyUnlessEqual:
        f[n] = jump(BPF_JMP | BPF_JEQ | BPF_K, call.a, n, n + 1, n + 2);
        ++n;
        break;
      case Kind::kDenyIfEither:
        f[n] = jump(BPF_JMP | BPF_JEQ | BPF_K, call.a, n, n + 3, n + 1);
        ++n;
        f[n] = jump(BPF_JMP | BPF_JEQ | BPF_K, call.b, n, n + 2, n + 1);
        ++n;
        break;
      case Kind::kDenyIfBothBits:
      case Kind::kDenyUnlessBoth: {
        // Two tests, arg then arg2: both bits set deny, both equal allow.
        const bool bits = call.kind == Kind::kDenyIfBothBits;
        const uint16_t test = BPF_JMP | (bits ? BPF_JSET : BPF_JEQ) | BPF_K;
        f[n] = jump(test, call.a, n, n + 1, bits ? n + 3 : n + 4);
        ++n;
        f[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, arg_offset(call.arg2));
        f[n] = jump(test, call.b, n, bits ? n + 2 : n + 1, bits ? n + 1 : n + 2);
        ++n;
        break;
      }
      case Kind::kDeny:
      case Kind::kNoSuchCall:
        break;
    }
    f[n++] = stmt(BPF_RET | BPF_K, kAllow);
    f[n++] = stmt(BPF_RET | BPF_K, kDenyAction);
  }
  f[n++] = stmt(BPF_RET | BPF_K, kDenyAction);
  p->fprog.len = static_cast<unsigned short>(n);
  p->fprog.filter = p->insns;
}

// [arch][network][exec_writable]
struct Programs {
  Program variant[2][2][2];
  Programs() {
    for (int a = 0; a < 2; ++a) {
      for (int net = 0; net < 2; ++net) {
        for (int ew = 0; ew < 2; ++ew) {
          build(&variant[a][net][ew], a == 0 ? FilterArch::kX86_64 : FilterArch::kAarch64, net != 0,
                ew != 0);
        }
      }
    }
  }
};

}  // namespace

const struct sock_fprog* sandbox_filter(FilterArch arch, bool network, bool exec_writable) {
  static const Programs programs;  // built once; C++11 makes the first call thread-safe
  const int a = arch == FilterArch::kX86_64 ? 0 : 1;
  return &programs.variant[a][network ? 1 : 0][exec_writable ? 1 : 0].fprog;
}

bool native_filter_arch(FilterArch* arch) {
#if defined(__x86_64__)
  *arch = FilterArch::kX86_64;
  return true;
#elif defined(__aarch64__)
  *arch = FilterArch::kAarch64;
  return true;
#else
  (void)arch;
  return false;
#endif
}

}  // namespace exactspawn
