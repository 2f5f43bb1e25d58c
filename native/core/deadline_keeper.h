// deadline_keeper.h — a run's ending (deadline-plan.ts, phases 1-3), executed
// off the JavaScript thread, so a host whose event loop is busy still ends a
// step on time (a timer in JavaScript fires only when the loop is free).
//
// RunEnding holds one run's plan and what happened: the first ending begins
// at the timeout (the keeper's thread) or when the host asks (abort, output
// over maxBuffer: begin() on the JavaScript thread), sends the plan's
// end_signal through its KillTarget (kill_target.h: the leader or its group
// while unreaped; a cgroup later), arms the group signal at the leader's
// exit, and final_signal follows after the grace, again from the keeper's
// thread. Whichever comes first acts; the record says which, whether the
// child was still running, and when the signal went (CLOCK_MONOTONIC ms,
// the clock of process.hrtime and performance.now). Due times are rounded
// up to whole milliseconds: a deadline never comes early.
//
// The keeper is one thread per process, started at the first run that needs
// it and never stopped (worker threads share it). It sleeps in read(2) on a
// timerfd armed (TFD_TIMER_ABSTIME, CLOCK_MONOTONIC) for the earliest due
// time, with every signal blocked; no libuv, so it runs under Node, Bun and
// Deno alike. Nothing it calls allocates except the schedule's own nodes.
//
// Plain C++; returns 0 or -errno. See timerfd_create(2), pthread_create(3).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "deadline_plan.h"
#include "kill_target.h"

namespace exactspawn {

// The first ending of a run, as it happened.
struct EndingRecord {
  bool begun = false;
  bool by_deadline = false;     // the timeout began it (else the host asked)
  bool leader_running = false;  // the child had not exited: the ending counts
  double at_ms = 0;             // when end_signal went (CLOCK_MONOTONIC, ms); 0 when none went
  // When the keeper found the signalled child exited (CLOCK_MONOTONIC ms, at
  // most kExitLookMaxMs after the exit); 0 when it has not (yet).
  double exited_at_ms = 0;
};

class RunEnding : public std::enable_shared_from_this<RunEnding> {
 public:
  RunEnding(std::shared_ptr<KillTarget> target, const DeadlinePlan& plan)
      : target_(std::move(target)), plan_(plan) {}

  // Schedules the timeout with the keeper (starting it if needed); 0 when
  // the plan has none, else 0 or -errno (*failed_call names the call).
  int arm(const char** failed_call);
  // Begins the ending now unless one has begun; returns the first one.
  EndingRecord begin(bool by_deadline);
  EndingRecord record();
  // The keeper's call when a time this run asked for has come.
  void on_due(int64_t now_ms);
  // Nothing more is sent (the run is over or handed on); leaves the schedule.
  void cancel();

 private:
  EndingRecord begin_locked(bool by_deadline);
  void look_for_exit_locked();

  std::mutex mutex_;
  const std::shared_ptr<KillTarget> target_;
  const DeadlinePlan plan_;
  EndingRecord record_;
  int64_t timeout_due_ = -1;  // CLOCK_MONOTONIC ms; -1: none scheduled
  int64_t final_due_ = -1;
  // After a signal went, the keeper looks for the exit (1, 2, 4 … ms apart):
  // a host whose loop is busy reaps late, and the result's times must not.
  int64_t exit_look_due_ = -1;
  int exit_look_ms_ = 0;
  bool final_sent_ = false;
  bool cancelled_ = false;
};

// CLOCK_MONOTONIC in whole milliseconds (rounded down), and exactly.
int64_t monotonic_ms();
double monotonic_ms_exact();

// How many runs the keeper has scheduled and not yet fired or cancelled (tests).
uint64_t deadline_keeper_pending();

}  // namespace exactspawn
