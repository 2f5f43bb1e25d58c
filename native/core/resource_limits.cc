// resource_limits.cc — see resource_limits.h.
#include "resource_limits.h"

#include <sys/resource.h>

namespace exactspawn {

namespace {

struct NamedLimit {
  const char* name;
  int resource;
};

// Every resource getrlimit(2) documents for Linux.
constexpr NamedLimit kLimits[] = {
    {"as", RLIMIT_AS},           {"core", RLIMIT_CORE},         {"cpu", RLIMIT_CPU},
    {"data", RLIMIT_DATA},       {"fsize", RLIMIT_FSIZE},       {"locks", RLIMIT_LOCKS},
    {"memlock", RLIMIT_MEMLOCK}, {"msgqueue", RLIMIT_MSGQUEUE}, {"nice", RLIMIT_NICE},
    {"nofile", RLIMIT_NOFILE},   {"nproc", RLIMIT_NPROC},       {"rss", RLIMIT_RSS},
    {"rtprio", RLIMIT_RTPRIO},   {"rttime", RLIMIT_RTTIME},     {"sigpending", RLIMIT_SIGPENDING},
    {"stack", RLIMIT_STACK},
};

}  // namespace

int rlimit_resource(const std::string& name) {
  for (const NamedLimit& limit : kLimits) {
    if (name == limit.name) return limit.resource;
  }
  return -1;
}

}  // namespace exactspawn
