// tree_usage.h — the names under which a contained step's CgroupUsage
// (core/cgroup.h) reaches JavaScript as `exit.tree` (src/native.ts
// RawTreeUsage), for the exit watch and spawnSync alike: one list, so a
// field added to the usage is added to both by one line here.
#pragma once

#include <cstdint>

#include "core/cgroup.h"

namespace exactspawn {

struct TreeUsageField {
  const char* key;
  int64_t CgroupUsage::*member;
};

inline constexpr TreeUsageField kTreeUsageFields[] = {
    {"userCpuMicros", &CgroupUsage::user_micros},
    {"systemCpuMicros", &CgroupUsage::system_micros},
    {"memoryPeakBytes", &CgroupUsage::memory_peak},
    {"oomKills", &CgroupUsage::oom_kills},
    {"memoryMaxEvents", &CgroupUsage::memory_max},
    {"oomEvents", &CgroupUsage::oom},
    {"pidsMaxEvents", &CgroupUsage::pids_max},
    {"cpuThrottledMicros", &CgroupUsage::throttled_micros},
    {"cpuThrottledPeriods", &CgroupUsage::throttled_periods},
};

}  // namespace exactspawn
