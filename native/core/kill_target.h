// kill_target.h — what an ending signals, behind a small interface the
// deadline keeper (deadline_keeper.h) calls from its own thread: today a
// child and, when it leads one, its process group (LeaderTarget); a
// contained step adds its cgroup (TreeTarget: cgroup.kill at the escalation).
//
// LeaderTarget is also the lock the exit watch's reaper shares with the
// keeper. A process-group id is safe to signal by number only while its
// leader is unreaped (the zombie pins it; after wait4 the number may be
// anyone's), and the reaper runs on the JavaScript thread while the keeper
// runs on its own: so the reap (wait4) and every signal by number happen
// under one mutex, and nothing is signalled once the reap has succeeded.
// The leader itself is signalled by pid under the same rule.
//
// Plain C++; every method may be called from any thread. See kill(2),
// waitid(2) (WNOWAIT), wait4(2).
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>

#include "child_exit.h"
#include "reap.h"

namespace exactspawn {

class KillTarget {
 public:
  virtual ~KillTarget() = default;
  // An ending begins: sends `sig` unless the child has already exited, and
  // asks for `group_sig_at_exit` (0: none) to reach the rest of its group at
  // the leader's exit. Returns whether the child was still running (only
  // then does the ending count as the run's failure).
  virtual bool begin(int sig, int group_sig_at_exit) = 0;
  // The grace has passed: sends `sig` while the child is not yet reaped.
  virtual void escalate(int sig) = 0;
  // Whether the child has exited (a zombie, or reaped), without reaping it.
  virtual bool has_exited() = 0;
};

class LeaderTarget final : public KillTarget {
 public:
  LeaderTarget(pid_t pid, bool to_group) : pid_(pid), to_group_(to_group) {}

  bool begin(int sig, int group_sig_at_exit) override;
  void escalate(int sig) override;
  bool has_exited() override;

  // The reaper's side (its pidfd reported): sends the group its at-exit
  // signal (`asked`, or the one an ending asked for) while the zombie still
  // pins the id, then one reap attempt (reap_ready_child), all under the
  // lock; once it has reaped (or failed for good) nothing is signalled again.
  int reap(int asked, ChildExit* out, ReapBackoff* backoff, int* retry_ms);

  // The child is handed to someone else (the orphan reaper): never signal it again.
  void release();

 private:
  // Under mutex_: sends sig to the group or the leader; 0 or -errno.
  int send_locked(int sig);

  std::mutex mutex_;
  const pid_t pid_;
  const bool to_group_;
  bool reaped_ = false;
  int group_sig_at_exit_ = 0;
};

// A contained step (cgroup.h): the plan's signals go to the leader (or its
// group) as with LeaderTarget; at the escalation the whole cgroup is
// SIGKILLed too (cgroup.kill), whether or not the leader is still there, so
// a tree that outlives the grace (a setsid daemon, a double fork) dies with
// its step. The leader's reap kills the cgroup as well (tree_watch.cc).
class TreeTarget final : public KillTarget {
 public:
  TreeTarget(std::shared_ptr<LeaderTarget> leader, std::string cgroup_path)
      : leader_(std::move(leader)), path_(std::move(cgroup_path)) {}

  bool begin(int sig, int group_sig_at_exit) override;
  void escalate(int sig) override;
  bool has_exited() override { return leader_->has_exited(); }

  // The cgroup is removed (or about to be): never written again.
  void removed();

 private:
  std::mutex mutex_;
  const std::shared_ptr<LeaderTarget> leader_;
  const std::string path_;
  bool removed_ = false;
};

}  // namespace exactspawn
