// spawn_process.cc — see spawn_process.h.
#include "spawn_process.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "child_path.h"
#include "stdio_plan.h"

namespace exactspawn {

namespace {

// The two file actions posix_spawn needs beyond POSIX, looked up at run time:
// addchdir_np came with glibc 2.29, addclosefrom_np with 2.34, and musl has
// only the first. Where one is missing, children start through the addon's
// own child path (child_path.h), which does both itself.
using AddClosefrom = int (*)(posix_spawn_file_actions_t*, int);
using AddChdir = int (*)(posix_spawn_file_actions_t*, const char*);

struct FileActionsNp {
  AddClosefrom addclosefrom;
  AddChdir addchdir;
};

const FileActionsNp& file_actions_np() {
  static const FileActionsNp found = {
      reinterpret_cast<AddClosefrom>(
          dlsym(RTLD_DEFAULT, "posix_spawn_file_actions_addclosefrom_np")),
      reinterpret_cast<AddChdir>(dlsym(RTLD_DEFAULT, "posix_spawn_file_actions_addchdir_np")),
  };
  return found;
}

// Owns the attribute and file-action objects so every path destroys them.
class SpawnPlan {
 public:
  SpawnPlan() {
    attr_error_ = posix_spawnattr_init(&attr_);
    actions_error_ = posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnPlan() {
    if (attr_error_ == 0) posix_spawnattr_destroy(&attr_);
    if (actions_error_ == 0) posix_spawn_file_actions_destroy(&actions_);
  }
  SpawnPlan(const SpawnPlan&) = delete;
  SpawnPlan& operator=(const SpawnPlan&) = delete;

  int init_error() const { return attr_error_ != 0 ? attr_error_ : actions_error_; }
  posix_spawnattr_t* attr() { return &attr_; }
  posix_spawn_file_actions_t* actions() { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
  int attr_error_ = 0;
  int actions_error_ = 0;
};

// glibc reserves signals 32 and 33 for itself (thread cancellation and
// set*id broadcasts): sigfillset() leaves them out and sigaddset() refuses
// them with EINVAL. Its posix_spawn child sets them to SIG_IGN unless they
// are in the SETSIGDEF set, while it resets every signal that is in that set
// (spawni.c tests the bits with __sigismember, which has no such filter), so
// a child would start with them ignored (SigIgn 0000000180000000) where a
// child_process child has none. Their bits are therefore set by hand, in the
// kernel's layout, which glibc's (and musl's) sigset_t shares: an array of
// unsigned long, signal n at bit (n - 1), lowest word first.
void add_glibc_internal_signals(sigset_t* set) {
  constexpr unsigned kBitsPerWord = sizeof(unsigned long) * CHAR_BIT;
  unsigned long words[sizeof(sigset_t) / sizeof(unsigned long)];
  std::memcpy(words, set, sizeof words);
  for (unsigned sig : {32u, 33u}) {
    words[(sig - 1) / kBitsPerWord] |= 1UL << ((sig - 1) % kBitsPerWord);
  }
  std::memcpy(set, words, sizeof words);
}

int set_attributes(posix_spawnattr_t* attr, const SpawnRequest& request) {
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (request.new_session) flags |= POSIX_SPAWN_SETSID;
  if (request.new_process_group && !request.new_session) flags |= POSIX_SPAWN_SETPGROUP;

  sigset_t empty;
  sigemptyset(&empty);
  int err = posix_spawnattr_setsigmask(attr, &empty);
  if (err != 0) return err;

  // Ignored dispositions survive exec; reset every one that can be changed.
  sigset_t all;
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  add_glibc_internal_signals(&all);
  err = posix_spawnattr_setsigdefault(attr, &all);
  if (err != 0) return err;

  if (flags & POSIX_SPAWN_SETPGROUP) {
    err = posix_spawnattr_setpgroup(attr, 0);
    if (err != 0) return err;
  }
  return posix_spawnattr_setflags(attr, flags);
}

// The stdio plan (stdio_plan.h) as file actions. glibc special-cases
// dup2(fd, fd) to clear FD_CLOEXEC, which is what kKeep asks for.
int add_stdio_actions(posix_spawn_file_actions_t* actions, const SpawnRequest& request) {
  std::vector<StdioStep> steps;
  int err = plan_stdio(request.stdio, request.stdio_count, &steps);
  if (err < 0) return -err;
  for (const StdioStep& step : steps) {
    switch (step.op) {
      case StdioOp::kDup:
        err = posix_spawn_file_actions_adddup2(actions, step.from, step.to);
        break;
      case StdioOp::kKeep:
        err = posix_spawn_file_actions_adddup2(actions, step.to, step.to);
        break;
      case StdioOp::kOpenNull:
        err = posix_spawn_file_actions_addopen(actions, step.to, "/dev/null", O_RDWR, 0);
        break;
      case StdioOp::kCloseFrom:
        err = file_actions_np().addclosefrom(actions, step.to);
        break;
    }
    if (err != 0) return err;
  }
  return 0;
}

}  // namespace

int spawn_process(const SpawnRequest& request, pid_t* pid) {
  if (request.file == nullptr || request.argv == nullptr || request.envp == nullptr ||
      request.stdio == nullptr || request.stdio_count < 3) {
    return -EINVAL;
  }
  if (request.pidfd != nullptr) *request.pidfd = -1;
  const FileActionsNp& np = file_actions_np();
  if (np.addclosefrom == nullptr || (request.cwd != nullptr && np.addchdir == nullptr) ||
      request.cgroup_fd >= 0) {
    ChildPathFailure failure;
    int start_status_fd = -1;  // stays -1: no credential change, the start is known on return
    return spawn_child_path(request, ExecControls{}, pid, &start_status_fd, &failure);
  }
  SpawnPlan plan;
  if (plan.init_error() != 0) return -plan.init_error();

  int err = set_attributes(plan.attr(), request);
  if (err == 0) err = add_stdio_actions(plan.actions(), request);
  if (err == 0 && request.cwd != nullptr) {
    err = np.addchdir(plan.actions(), request.cwd);
  }
  if (err != 0) return -err;

  pid_t child = 0;
  err = posix_spawn(&child, request.file, plan.actions(), plan.attr(), request.argv, request.envp);
  if (err != 0) return -err;
  *pid = child;
  return 0;
}

}  // namespace exactspawn
