// probe.cc — see probe.h.
#include "probe.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

namespace exactspawn {

namespace {

// sysconf(3): -1 with errno unchanged means "no limit"; -1 with errno set is an error.
ProbedValue read_sysconf(int name) {
  ProbedValue out;
  errno = 0;
  long value = sysconf(name);
  if (value == -1) {
    if (errno != 0) {
      out.error = errno;
    } else {
      out.unlimited = true;
    }
    return out;
  }
  out.value = value;
  return out;
}

ProbedValue from_rlim(rlim_t value) {
  ProbedValue out;
  if (value == RLIM_INFINITY) {
    out.unlimited = true;
  } else {
    out.value = static_cast<int64_t>(value);
  }
  return out;
}

}  // namespace

ProbeResult probe_limits() {
  ProbeResult result;
  result.arg_max = read_sysconf(_SC_ARG_MAX);
  result.page_size = read_sysconf(_SC_PAGESIZE);

  struct rlimit stack {};
  if (getrlimit(RLIMIT_STACK, &stack) == 0) {
    result.stack_soft = from_rlim(stack.rlim_cur);
    result.stack_hard = from_rlim(stack.rlim_max);
  } else {
    result.stack_soft.error = errno;
    result.stack_hard.error = errno;
  }
  return result;
}

}  // namespace exactspawn
