// clone3.cc — see clone3.h.
#include "clone3.h"

#include <cerrno>

// The entry, exactspawn_clone3(args, size, fn, arg): the system call, then in
// the child (which starts on its new stack with the parent's registers and a
// zero return value) fn(arg) and exit(2) with its result. The parent returns
// the raw result: a pid, or -errno. fn and arg ride in registers the system
// call preserves.
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
#elif defined(__aarch64__)
asm(R"(
  .text
  .p2align 2
  .hidden exactspawn_clone3
  .globl exactspawn_clone3
  .type exactspawn_clone3, %function
exactspawn_clone3:
  mov x9, x2
  mov x10, x3
  mov x8, #435
  svc #0
  cbnz x0, 1f
  mov x29, xzr
  mov x30, xzr
  mov x0, x10
  blr x9
  mov x8, #93
  svc #0
  brk #0
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

long clone3_run(Clone3Args* args, int (*fn)(void*), void* arg) {
#ifdef EXACTSPAWN_HAVE_CLONE3_ENTRY
  return exactspawn_clone3(args, sizeof *args, fn, arg);
#else
  (void)args;
  (void)fn;
  (void)arg;
  return -ENOSYS;
#endif
}

}  // namespace exactspawn
