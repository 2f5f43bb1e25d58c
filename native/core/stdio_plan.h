// stdio_plan.h — the one stdio setup of a child, for both ways of starting
// one: posix_spawn (spawn_process.cc turns each step into a file action) and
// the addon's own child path (child_path.cc runs each step as a raw system
// call between clone and exec). Computed once per spawn, in the parent.
//
// Slot i of the child gets stdio[i] (an fd of the parent) or /dev/null
// (stdio[i] < 0); every other fd is closed. A source below the slot count
// that is not its own slot could be overwritten by an earlier dup onto its
// number, so such sources are first parked above every slot and every source
// (each occurrence on a number of its own, in slot order). A source already
// in its own slot is kept and made inheritable (Node marks 0-2
// close-on-exec). /dev/null is opened straight onto its slot (O_RDWR).
//
// Pure: no system call, no global state. See dup2(2), open(2),
// close_range(2), posix_spawn_file_actions_adddup2(3).
#pragma once

#include <cstddef>
#include <vector>

namespace exactspawn {

enum class StdioOp : unsigned char {
  kDup,        // dup2(from, to): a park, or a slot filled from its source
  kKeep,       // `to` is already the source: clear its close-on-exec flag
  kOpenNull,   // open("/dev/null", O_RDWR) onto `to`
  kCloseFrom,  // close every fd >= to
};

struct StdioStep {
  StdioOp op;
  int from;  // kDup only, else -1
  int to;
};

// Appends the steps for `count` slots to *steps (cleared first). Returns 0,
// or -EBADF when count or a parking number would not fit an fd (> INT_MAX).
int plan_stdio(const int* stdio, size_t count, std::vector<StdioStep>* steps);

// One more than the highest fd number the steps touch: an fd at or above it
// (the child path's start-status pipe) is never overwritten by them.
int stdio_ceiling(const std::vector<StdioStep>& steps);

}  // namespace exactspawn
