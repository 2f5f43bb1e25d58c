// glibc_floor.h — keeps the addon loadable on glibc 2.28 when it is built
// against a newer glibc. binding.gyp force-includes it (-include) into every
// translation unit, so no source file has to remember it.
//
// glibc 2.34 moved the libpthread and libdl symbols into libc.so.6 under a new
// symbol version (GLIBC_2.34; pthread_sigmask got GLIBC_2.32), and a build
// against 2.34+ binds to those versions, which older glibc does not have. The
// old versions are still exported by every glibc since (x86-64: GLIBC_2.2.5,
// aarch64: GLIBC_2.17), so each reference is pinned to them with .symver. On
// glibc < 2.34 the symbol is then found in libpthread.so.0 / libdl.so.2, which
// Node itself links. A pin only affects an object file that references the
// symbol; unused pins add nothing. `npm run prebuild` checks the result with
// objdump -T (no GLIBC_ version above 2.28, no GLIBCXX above 3.4.21).
// fstat64 (2.33) and std::__throw_bad_array_new_length (GLIBCXX_3.4.29) are
// defined locally instead: see glibc_floor.cc.
#pragma once

#include <features.h>

#if defined(__GLIBC__) && !defined(EXACTSPAWN_NO_GLIBC_FLOOR)

#if defined(__x86_64__)
#define EXACTSPAWN_GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define EXACTSPAWN_GLIBC_BASE "GLIBC_2.17"
#endif

#ifdef EXACTSPAWN_GLIBC_BASE
#define EXACTSPAWN_PIN(symbol) __asm__(".symver " #symbol "," #symbol "@" EXACTSPAWN_GLIBC_BASE)
EXACTSPAWN_PIN(dladdr);
EXACTSPAWN_PIN(dlclose);
EXACTSPAWN_PIN(dlerror);
EXACTSPAWN_PIN(dlopen);
EXACTSPAWN_PIN(dlsym);
EXACTSPAWN_PIN(pthread_attr_setstacksize);
EXACTSPAWN_PIN(pthread_create);
EXACTSPAWN_PIN(pthread_detach);
EXACTSPAWN_PIN(pthread_getspecific);
EXACTSPAWN_PIN(pthread_join);
EXACTSPAWN_PIN(pthread_key_create);
EXACTSPAWN_PIN(pthread_key_delete);
EXACTSPAWN_PIN(pthread_kill);
EXACTSPAWN_PIN(pthread_mutexattr_init);
EXACTSPAWN_PIN(pthread_mutexattr_settype);
EXACTSPAWN_PIN(pthread_mutexattr_destroy);
EXACTSPAWN_PIN(pthread_once);
EXACTSPAWN_PIN(pthread_setspecific);
EXACTSPAWN_PIN(pthread_sigmask);
EXACTSPAWN_PIN(pthread_sigqueue);
#undef EXACTSPAWN_PIN
#endif

#endif
