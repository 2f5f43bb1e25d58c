// signal_names.h — the "SIGTERM"-style name of a signal number, as Node's
// child_process reports it. See signal(7); the names are
// the addon's own table (see signal_names.cc).
#pragma once

#include <string>

namespace exactspawn {

// "SIG" + abbreviation; real-time signals as "SIGRTMIN+n"; unknown as "SIG<n>".
std::string signal_name(int sig);

}  // namespace exactspawn
