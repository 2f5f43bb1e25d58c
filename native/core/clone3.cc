// clone3.cc — see clone3.h.
#include "clone3.h"

#include <sched.h>

#include <atomic>
#include <cerrno>

// The entry, exactspawn_clone3(args, size, fn, arg): the system call, then in
// the child (which starts on its new stack with the parent's registers and a
// zero return value) fn(arg) and exit(2) with its result. The parent returns
// the raw result: a pid, or -errno. fn and arg ride in registers the system
// call preserves.
//
// x86-64 only: no emulator runs clone3 (qemu-user 7.2 and 10.0 answer ENOSYS),
// so an arm64 entry could not be run anywhere here, and untested assembly is
// not shipped. arm64 hosts take clone(2) and the child's own move
// (enter_cgroup), which costs a cgroup migration per contained step.
#if defined(__x86_64__)
asm(R"(
  .text
  .p2align 4
  .hidden exactspawn_clone3
  .globl exactspawn_clone3
  .type exactspawn_clone3, @function
exactspawn_clone3:
  mov %rdx, %r8
  mov %rcx, %r9
  mov $435, %eax
  syscall
  test %rax, %rax
  jnz 1f
  xor %ebp, %ebp
  mov %r9, %rdi
  call *%r8
  mov %eax, %edi
  mov $60, %eax
  syscall
  hlt
1:
  ret
  .size exactspawn_clone3, .-exactspawn_clone3
)");
#define EXACTSPAWN_HAVE_CLONE3_ENTRY 1
#endif

#ifdef EXACTSPAWN_HAVE_CLONE3_ENTRY
extern "C" long exactspawn_clone3(exactspawn::Clone3Args* args, unsigned long size,
                                  int (*fn)(void*), void* arg);
#endif

namespace exactspawn {

namespace {

std::atomic<int> pidfd_refusals{0};
std::atomic<uint64_t> children{0};

bool refuse_pidfd(const Clone3Args* args) {
  if ((args->flags & CLONE_PIDFD) == 0) return false;
  int left = pidfd_refusals.load(std::memory_order_relaxed);
  while (left > 0) {
    if (pidfd_refusals.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

}  // namespace

long clone3_run(Clone3Args* args, int (*fn)(void*), void* arg) {
  if (refuse_pidfd(args)) return -EINVAL;
#ifdef EXACTSPAWN_HAVE_CLONE3_ENTRY
  const long child = exactspawn_clone3(args, sizeof *args, fn, arg);
  if (child > 0) children.fetch_add(1, std::memory_order_relaxed);
  return child;
#else
  (void)fn;
  (void)arg;
  return -ENOSYS;
#endif
}

void clone3_refuse_pidfd(int count) { pidfd_refusals.store(count, std::memory_order_relaxed); }

uint64_t clone3_children() { return children.load(std::memory_order_relaxed); }

}  // namespace exactspawn
