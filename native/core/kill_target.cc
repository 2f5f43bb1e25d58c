// kill_target.cc — see kill_target.h.
#include "kill_target.h"

#include <signal.h>

#include <cerrno>

#include "cgroup.h"
#include "watchdog.h"

namespace exactspawn {

int LeaderTarget::send_locked(int sig) {
  if (reaped_) return -ESRCH;
  // Unreaped: the pid (and the group id it leads) is still this child's.
  if (to_group_) return signal_group(pid_, sig);
  return kill(pid_, sig) < 0 ? -errno : 0;
}

bool LeaderTarget::begin(int sig, int group_sig_at_exit) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A child that has exited (a zombie the busy reaper has not reached yet)
  // did not outlive its deadline: nothing is sent, as after its reap.
  if (reaped_ || child_has_exited(pid_)) return false;
  group_sig_at_exit_ = group_sig_at_exit;
  return send_locked(sig) != -ESRCH;
}

void LeaderTarget::escalate(int sig) {
  std::lock_guard<std::mutex> lock(mutex_);
  send_locked(sig);
}

bool LeaderTarget::has_exited() {
  std::lock_guard<std::mutex> lock(mutex_);
  // Unreaped, the pid is still this child's (waitid WNOWAIT leaves the zombie).
  return reaped_ || child_has_exited(pid_);
}

int LeaderTarget::reap(int asked, ChildExit* out, ReapBackoff* backoff, int* retry_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (reaped_) return -ECHILD;
  // The leader has exited and is not reaped yet: the last moment the rest of
  // its group can be signalled by number without reaching a stranger.
  int group_sig = asked != 0 ? asked : group_sig_at_exit_;
  if (group_sig != 0) signal_group(pid_, group_sig);
  int r = reap_ready_child(pid_, out, backoff, retry_ms);
  if (r != 0) reaped_ = true;
  return r;
}

void LeaderTarget::release() {
  std::lock_guard<std::mutex> lock(mutex_);
  reaped_ = true;
}

bool TreeTarget::begin(int sig, int group_sig_at_exit) {
  return leader_->begin(sig, group_sig_at_exit);
}

void TreeTarget::escalate(int sig) {
  leader_->escalate(sig);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!removed_) kill_cgroup(path_);
}

void TreeTarget::removed() {
  std::lock_guard<std::mutex> lock(mutex_);
  removed_ = true;
}

}  // namespace exactspawn
