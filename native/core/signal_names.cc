// signal_names.cc — see signal_names.h.
#include "signal_names.h"

#include <signal.h>
#include <string.h>

namespace exactspawn {

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  if (abbrev != nullptr) return std::string("SIG") + abbrev;
  if (sig >= SIGRTMIN && sig <= SIGRTMAX) return "SIGRTMIN+" + std::to_string(sig - SIGRTMIN);
  return "SIG" + std::to_string(sig);
}

}  // namespace exactspawn
