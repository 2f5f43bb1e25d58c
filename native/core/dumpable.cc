// dumpable.cc — see dumpable.h.
#include "dumpable.h"

#include <sys/prctl.h>

#include <cerrno>

namespace exactspawn {

int set_dumpable(bool dumpable) {
  return prctl(PR_SET_DUMPABLE, dumpable ? 1 : 0, 0, 0, 0) == 0 ? 0 : -errno;
}

int dumpable_state() {
  const int state = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
  return state >= 0 ? state : -errno;
}

}  // namespace exactspawn
