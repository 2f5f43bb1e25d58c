// glibc_floor.cc — local definitions of the library symbols whose only
// versions are newer than the addon's floor (glibc 2.28, GLIBCXX 3.4.21);
// see glibc_floor.h. The version script (native/exports.map) keeps both
// local, so they serve only the addon's own references.
#include <features.h>

#include <new>  // defines __GLIBCXX__ under libstdc++

#if defined(__GLIBC__)
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

// glibc 2.33 made fstat64 a real function (GLIBC_2.33); before, it was an
// inline wrapper around __fxstat64. The system call fills the same struct on
// x86-64 and aarch64.
extern "C" int fstat64(int fd, struct stat64* buf) noexcept {
  return static_cast<int>(syscall(SYS_fstat, fd, buf));
}

// GCC 11+ headers read this glibc 2.32 variable to skip atomic operations in
// a single-threaded process (std::shared_ptr's count). Kept at 0 here, the
// counts are always atomic: correct in any process, threads or not.
// (Defined inside a linkage block: `extern "C" char x = 0;` is the same
// definition, but -Wall warns that it is initialized and declared extern.)
extern "C" {
char __libc_single_threaded = 0;
}
#endif

#if defined(__GLIBCXX__)
// GCC 11+ headers call this from std::allocator when a size overflows
// (vector growth); libstdc++ exports it only from GLIBCXX_3.4.29 on.
namespace std {
[[noreturn]] void __throw_bad_array_new_length() { throw bad_alloc(); }
}  // namespace std
#endif
