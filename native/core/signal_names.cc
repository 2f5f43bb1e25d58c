// signal_names.cc — see signal_names.h.
#include "signal_names.h"

#include <signal.h>

namespace exactspawn {

namespace {

struct SignalName {
  int number;
  const char* name;
};

// The names sigabbrev_np(3) gives (glibc >= 2.32 only, not in musl), with
// "SIG" in front; aliases (SIGIOT, SIGIO, SIGCLD) are not listed.
constexpr SignalName kNames[] = {
#ifdef SIGHUP
    {SIGHUP, "SIGHUP"},
#endif
#ifdef SIGINT
    {SIGINT, "SIGINT"},
#endif
#ifdef SIGQUIT
    {SIGQUIT, "SIGQUIT"},
#endif
#ifdef SIGILL
    {SIGILL, "SIGILL"},
#endif
#ifdef SIGTRAP
    {SIGTRAP, "SIGTRAP"},
#endif
#ifdef SIGABRT
    {SIGABRT, "SIGABRT"},
#endif
#ifdef SIGBUS
    {SIGBUS, "SIGBUS"},
#endif
#ifdef SIGFPE
    {SIGFPE, "SIGFPE"},
#endif
#ifdef SIGKILL
    {SIGKILL, "SIGKILL"},
#endif
#ifdef SIGUSR1
    {SIGUSR1, "SIGUSR1"},
#endif
#ifdef SIGSEGV
    {SIGSEGV, "SIGSEGV"},
#endif
#ifdef SIGUSR2
    {SIGUSR2, "SIGUSR2"},
#endif
#ifdef SIGPIPE
    {SIGPIPE, "SIGPIPE"},
#endif
#ifdef SIGALRM
    {SIGALRM, "SIGALRM"},
#endif
#ifdef SIGTERM
    {SIGTERM, "SIGTERM"},
#endif
#ifdef SIGSTKFLT
    {SIGSTKFLT, "SIGSTKFLT"},
#endif
#ifdef SIGCHLD
    {SIGCHLD, "SIGCHLD"},
#endif
#ifdef SIGCONT
    {SIGCONT, "SIGCONT"},
#endif
#ifdef SIGSTOP
    {SIGSTOP, "SIGSTOP"},
#endif
#ifdef SIGTSTP
    {SIGTSTP, "SIGTSTP"},
#endif
#ifdef SIGTTIN
    {SIGTTIN, "SIGTTIN"},
#endif
#ifdef SIGTTOU
    {SIGTTOU, "SIGTTOU"},
#endif
#ifdef SIGURG
    {SIGURG, "SIGURG"},
#endif
#ifdef SIGXCPU
    {SIGXCPU, "SIGXCPU"},
#endif
#ifdef SIGXFSZ
    {SIGXFSZ, "SIGXFSZ"},
#endif
#ifdef SIGVTALRM
    {SIGVTALRM, "SIGVTALRM"},
#endif
#ifdef SIGPROF
    {SIGPROF, "SIGPROF"},
#endif
#ifdef SIGWINCH
    {SIGWINCH, "SIGWINCH"},
#endif
#ifdef SIGPOLL
    {SIGPOLL, "SIGPOLL"},
#endif
#ifdef SIGPWR
    {SIGPWR, "SIGPWR"},
#endif
#ifdef SIGSYS
    {SIGSYS, "SIGSYS"},
#endif
};

}  // namespace

std::string signal_name(int sig) {
  for (const SignalName& entry : kNames) {
    if (entry.number == sig) return entry.name;
  }
  if (sig >= SIGRTMIN && sig <= SIGRTMAX) return "SIGRTMIN+" + std::to_string(sig - SIGRTMIN);
  return "SIG" + std::to_string(sig);
}

}  // namespace exactspawn
