// deadline_plan.h — a run's deadline plan as plain numbers: when an ending
// begins, which signal goes to whom, and when the next one follows. Made in
// TypeScript (src/spawn/deadline-plan.ts, nativeDeadline) and executed as
// given by spawn's deadline keeper (deadline_keeper.h) and spawnSync's
// blocking loop (run_sync.h), so both run one plan and decide nothing.
#pragma once

#include <cstdint>

namespace exactspawn {

struct DeadlinePlan {
  int64_t timeout_ms = -1;       // after the start, an ending begins; -1: never
  int end_signal = 0;            // sent when an ending begins (killSignal)
  bool to_group = false;         // signals go to the child's process group
  int64_t grace_ms = 0;          // from the ending: final_signal (and the end of reading)
  int final_signal = 0;          // sent after the grace while the leader is unreaped
  int group_signal_at_exit = 0;  // to the group at the leader's exit after an ending; 0: none
};

}  // namespace exactspawn
