// resource_limits.h — the RLIMIT_* resource of a lower-case name ("nofile",
// "cpu", "as", …), so callers name limits the way prlimit(1) and ulimit do.
// See getrlimit(2), prlimit(1).
#pragma once

#include <string>

namespace exactspawn {

// The RLIMIT_* number for a name, or -1 for a name the kernel has no limit for.
int rlimit_resource(const std::string& name);

}  // namespace exactspawn
