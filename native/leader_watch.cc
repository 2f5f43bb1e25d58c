// leader_watch.cc — a PID-namespace step's leader watched by the host
// itself (see watch_state.h). The init (native/helper/init.cc) reaps the
// leader and ends the namespace, but a root step's tracer can hold the init
// stopped: then only the host can end the step. The leader sends its own
// pidfd before its steps (child_steps.h kLeaderRecord); when it turns
// readable the leader has ended, and the host SIGKILLs the init, which kills
// every process of the namespace, after taking the leader's status: from its
// zombie (/proc), or, once it is reaped, from the init's report, which the
// init writes before that reap.
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "core/child_exit.h"
#include "core/pid_namespace.h"
#include "watch_state.h"

namespace exactspawn {

namespace {

constexpr int kNotZombieYetMs = 5;  // readable, but /proc does not show the zombie yet

}  // namespace

void WatchLeader(Watch* w, int pidfd) {
  if (pidfd < 0) return;
  if (WatchLeaderFd(w, pidfd, &w->leader_token) != 0) {
    close(pidfd);
    return;
  }
  w->leader_pidfd = pidfd;
}

void StopWatchingLeader(Watch* w) {
  if (w->leader_pidfd < 0) return;
  UnwatchFd(w->state, w->leader_pidfd, &w->leader_token);
  close(w->leader_pidfd);
  w->leader_pidfd = -1;
}

void OnLeaderReady(Watch* w) {
  if (w->leader_pidfd < 0) return;
  if (w->life == Life::kWatching && w->pidfd >= 0) {
    // The grace is over and the init is still there: held back, so ended here.
    if (w->leader_ended) {
      signal_pidfd(w->pidfd, SIGKILL);
      StopWatchingLeader(w);
      return;
    }
    int status = 0;
    const int r = leader_exit_status(w->leader_pidfd, &status);
    if (r == -EAGAIN) {
      RetryFd(w->state, w->leader_pidfd, w->leader_token, kNotZombieYetMs);
      return;
    }
    if (r == 0) {
      w->leader_exit_known = true;
      w->leader_wait_status = status;
    }
    // The status is in hand, or the init has reported it (it reports before
    // it reaps the leader): the namespace may end. The init is given
    // kInitGraceMs to end it itself (its reaping counts the tree's CPU), then
    // SIGKILLed. Where /proc could not tell, the init ends it as before.
    if (r == 0 || r == -ESRCH) {
      w->leader_ended = true;
      RetryFd(w->state, w->leader_pidfd, w->leader_token, kInitGraceMs);
      return;
    }
  }
  StopWatchingLeader(w);
}

void ApplyLeaderExit(Watch* w, bool leader_reported) {
  StopWatchingLeader(w);
  if (!leader_reported && w->start_error == 0 && w->leader_exit_known) {
    set_exit_status(w->leader_wait_status, &w->exit);
  }
}

}  // namespace exactspawn
