// seccomp_filter.h — the classic-BPF program every sandboxed child installs
// (after no_new_privs, see sandbox.h), built per architecture.
//
// It checks the architecture first: a system call from any other ABI (i386
// or arm32 compat, anything unknown) kills the process; on x86_64 an x32
// call (nr | 0x40000000) is refused. Then it refuses with EPERM:
//   - ioctl TIOCSTI and TIOCLINUX (typing into a terminal, console selection);
//   - add_key, request_key, keyctl (keyrings; keyctl(2), keyrings(7));
//   - chmod, fchmod, fchmodat, fchmodat2 whose mode has S_ISUID or S_ISGID;
//   - chown, fchown, lchown, fchownat (and nothing else of the family exists
//     on these two ABIs);
//   - setxattr, lsetxattr, fsetxattr, setxattrat, removexattr, lremovexattr,
//     fremovexattr, removexattrat;
//   - mknod, mknodat, creat whose mode has S_ISUID or S_ISGID, and open,
//     openat with O_CREAT or O_TMPFILE and such a mode (setid files planted
//     at creation; mkdir needs no rule, the kernel drops those bits there);
//   - prlimit64 on any pid but 0 (the caller): another process's limits,
//     the host's included, are out of reach; setrlimit/getrlimit pass 0;
//   - another process's scheduling: sched_setscheduler, sched_setparam,
//     sched_setattr and sched_setaffinity on any pid but 0, setpriority
//     unless PRIO_PROCESS and who 0, ioprio_set unless IOPRIO_WHO_PROCESS
//     and who 0 (a tid, the caller's own included, is refused as well);
//   - io_uring_setup (io_uring performs operations without these calls);
//   - when exec of written files is off: memfd_create without
//     MFD_NOEXEC_SEAL (an anonymous file could otherwise be exec'd);
//   - when the network is off: socket and socketpair for any family but
//     AF_UNIX.
// And it answers openat2 with ENOSYS (its mode lies in a struct the filter
// cannot read; callers fall back to openat, as on a kernel before 5.6).
// Each argument the filter reads is declared by the kernel as an int,
// unsigned int or umode_t, so the low 32 bits are what the kernel uses.
// See seccomp(2), ioctl_tty(2) (TIOCSTI), memfd_create(2) (MFD_NOEXEC_SEAL).
#pragma once

#include <linux/filter.h>

#include <cstddef>

namespace exactspawn {

enum class FilterArch { kX86_64, kAarch64 };

// The program for `arch`; static storage built once (thread-safe), never freed.
const struct sock_fprog* sandbox_filter(FilterArch arch, bool network, bool exec_writable);

// The architecture this addon was built for; false where no filter exists.
bool native_filter_arch(FilterArch* arch);

}  // namespace exactspawn
