// clone3.h — a vfork-style child started by clone3(2) (Linux 5.3), for what
// clone(2) cannot ask: CLONE_INTO_CGROUP (5.7) puts a contained step's child
// into its cgroup as it is created, so no instruction of it runs outside and
// the host pays no cgroup migration (a write to cgroup.procs).
//
// The C library offers no clone3 wrapper that runs a function on a new stack,
// so the entry is a few instructions of assembly, written for x86-64 (the one
// architecture it can be run on here: clone3.cc); elsewhere clone3_run()
// fails with -ENOSYS and the caller takes clone(2).
#ifndef EXACTSPAWN_CORE_CLONE3_H_
#define EXACTSPAWN_CORE_CLONE3_H_

#include <cstdint>

namespace exactspawn {

constexpr uint64_t kCloneIntoCgroup = 0x200000000ULL;  // CLONE_INTO_CGROUP

// struct clone_args as of Linux 5.7 (CLONE_ARGS_SIZE_VER2, 88 bytes); kept
// here so that older kernel headers build it.
struct Clone3Args {
  uint64_t flags = 0;
  uint64_t pidfd = 0;  // where CLONE_PIDFD stores the child's pidfd (an int*)
  uint64_t child_tid = 0;
  uint64_t parent_tid = 0;
  uint64_t exit_signal = 0;
  uint64_t stack = 0;  // the lowest address of the child's stack
  uint64_t stack_size = 0;
  uint64_t tls = 0;
  uint64_t set_tid = 0;
  uint64_t set_tid_size = 0;
  uint64_t cgroup = 0;  // a cgroup2 directory's fd, with CLONE_INTO_CGROUP
};

// Runs fn(arg) in a child made by clone3 with `args`, on the stack it names;
// the child exits with fn's return value. In the parent: the child's pid, or
// -errno (-ENOSYS also where this architecture has no entry written).
long clone3_run(Clone3Args* args, int (*fn)(void*), void* arg);

// For tests (debug_binding.h): the next `count` clone3_run() calls that ask
// CLONE_PIDFD fail with -EINVAL without reaching the kernel, as a kernel or a
// seccomp profile that refuses the flag answers; and how many children
// clone3_run() has started in this process.
void clone3_refuse_pidfd(int count);
uint64_t clone3_children();

}  // namespace exactspawn

#endif  // EXACTSPAWN_CORE_CLONE3_H_
