// probe.h — reads the kernel limits that decide whether an execve fits.
//
// Plain C++ over libc; no Node-API. Each field is read independently and a
// failure is reported in that field's `error` (a positive errno), never thrown.
// See sysconf(3) (_SC_ARG_MAX, _SC_PAGESIZE) and getrlimit(2) (RLIMIT_STACK).
#pragma once

#include <cstdint>

namespace exactspawn {

struct ProbedValue {
  int64_t value = 0;       // meaningful only when error == 0 and !unlimited
  bool unlimited = false;  // RLIM_INFINITY, reported as such rather than a huge number
  int error = 0;           // positive errno when the read failed
};

struct ProbeResult {
  ProbedValue arg_max;     // sysconf(_SC_ARG_MAX)
  ProbedValue stack_soft;  // getrlimit(RLIMIT_STACK).rlim_cur
  ProbedValue stack_hard;  // getrlimit(RLIMIT_STACK).rlim_max
  ProbedValue page_size;   // sysconf(_SC_PAGESIZE)
};

// Never fails as a whole; each field carries its own outcome.
ProbeResult probe_limits();

}  // namespace exactspawn
