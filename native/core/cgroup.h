// cgroup.h — contained steps through cgroup v2: each step's processes live in
// a cgroup of their own, which is killed whole when the step ends and
// removed once empty, whatever sessions, groups or double forks they used.
//
// Where: the cgroup2 mount is found in /proc/self/mountinfo and the host's own
// cgroup in /proc/self/cgroup (the "0::" line), never assumed. Under a parent
// (the host's own cgroup, or one the host names) the host makes once a
// sub-tree of its own, "<parent>/exactspawn-<pid>-<random>" (unique per host
// life: hosts in PID namespaces of their own share pids), holding no process
// itself (the no-internal-processes rule: a controller can be enabled for its
// children), enables there every controller the parent delegates of memory,
// pids and cpu, and in it makes one fresh cgroup per step, "s<n>".
//
// Entering: the child writes "0" to the step's cgroup.procs (an fd the parent
// opened) before anything else of the child runs — right after its
// session/group, before its credentials, sandbox and exec — so the target's
// first instruction already runs inside, and so does every process it ever
// forks: no window where a fast fork escapes. Where it can, the child is
// instead created inside by clone3(CLONE_INTO_CGROUP) (clone3.h), which saves
// that write and its cgroup migration; the write is the fallback.
//
// Ending: cgroup.kill (Linux 5.14) SIGKILLs every process of the sub-tree at
// once; without it the cgroup is frozen (cgroup.freeze), every pid listed in
// cgroup.procs SIGKILLed and thawed again. Waiting: cgroup.events turns
// POLLPRI (epoll: EPOLLPRI) whenever "populated" changes; once it reads
// "populated 0" the directory is removed (rmdir(2)).
// See cgroups(7), Documentation/admin-guide/cgroup-v2.rst.
//
// Plain C++ over syscalls; every call returns 0 (or a count) or -errno.
// enter_cgroup() is async-signal-safe (raw system calls only); the rest is
// for the parent.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "step_failure.h"

namespace exactspawn {

// Where this process stands in the cgroup v2 hierarchy.
struct CgroupHost {
  std::string mount;  // the cgroup2 mount point ("" when none)
  std::string own;    // the host's own cgroup directory (mount + the "0::" path)
};

// Reads /proc/self/mountinfo and /proc/self/cgroup: -ENOENT when there is no
// cgroup2 mount or the host has no cgroup v2 path (a v1-only host); -errno
// when a file cannot be read.
int find_cgroup_host(CgroupHost* out);

// One limit written into the step's cgroup: its controller is enabled in the
// host's sub-tree first (cgroup.subtree_control).
struct CgroupLimit {
  const char* controller = nullptr;  // "memory", "pids", "cpu"
  const char* file = nullptr;        // "memory.max", "pids.max", "cpu.max"
  const char* value = nullptr;       // as the file takes it
};

// A step's cgroup. dir_fd is for the child's start (closed once it
// started); events_fd is watched until the cgroup is empty.
struct StepCgroup {
  std::string path;
  int dir_fd = -1;     // the cgroup's directory, O_PATH | O_DIRECTORY | O_CLOEXEC
  int events_fd = -1;  // cgroup.events, O_RDONLY | O_CLOEXEC
};

// Makes a fresh cgroup for one step under `parent` (an absolute directory in
// the cgroup2 mount): the host's sub-tree there first if this process has
// not made it yet (registered with the watchdog, core/watchdog.h, which kills
// and removes it when the host dies, and with each of `controllers` the
// parent delegates enabled for its steps), then the step's cgroup with its limits,
// then opens its directory and its cgroup.events. On failure nothing is left
// and *failure names the call and its path (*failed_path).
int make_step_cgroup(const std::string& parent, const std::vector<std::string>& controllers,
                     const CgroupLimit* limits, size_t limit_count, StepCgroup* out,
                     StepFailure* failure, std::string* failed_path);

// In the child, before its exec, where the kernel did not place it at clone
// (CLONE_INTO_CGROUP, clone3.h): moves the calling process into the cgroup
// whose directory is open as `dir_fd`. 0, or -errno with *syscall naming the
// call. Async-signal-safe.
int enter_cgroup(int dir_fd, const char** syscall_name);

// SIGKILLs every process in the cgroup at `path` and below (cgroup.kill, or
// freeze / kill each pid / thaw on kernels before 5.14). 0 or -errno. Safe
// to call from any thread, any number of times.
int kill_cgroup(const std::string& path);

// 1 while the cgroup (or a descendant) has a process, 0 once empty, or
// -errno. Reading also consumes the pending POLLPRI.
int cgroup_populated(int events_fd);

// Blocks until the cgroup is empty or timeout_ms passed (-1: no limit): poll(2)
// for POLLPRI on events_fd, never a sleep. 0 once empty, -ETIMEDOUT, -errno.
int wait_cgroup_empty(int events_fd, int timeout_ms);

// What the tree used, and what its limits refused, read before the cgroup is
// removed; -1 where the kernel does not say (the controller not enabled: its
// files, or their keys, are absent).
struct CgroupUsage {
  int64_t user_micros = -1;        // cpu.stat user_usec (present without controllers)
  int64_t system_micros = -1;      // cpu.stat system_usec
  int64_t memory_peak = -1;        // memory.peak, bytes
  int64_t oom_kills = -1;          // memory.events oom_kill
  int64_t memory_max = -1;         // memory.events max: usage met memory.max
  int64_t oom = -1;                // memory.events oom: the OOM killer was invoked
  int64_t pids_max = -1;           // pids.events max: a fork refused at pids.max
  int64_t throttled_micros = -1;   // cpu.stat throttled_usec (the cpu controller)
  int64_t throttled_periods = -1;  // cpu.stat nr_throttled
};
void read_cgroup_usage(const std::string& path, CgroupUsage* usage);

// Removes the cgroup and any cgroup a step made below it (depth first).
// 0, or -errno (-EBUSY while a process is still in it).
int remove_cgroup(const std::string& path);

// Closes the fds (not the directory).
void close_step_cgroup(StepCgroup* cgroup);

// The whole ending of a step's cgroup where nobody can wait on an event
// loop (spawnSync, teardown): kill, wait for empty (timeout_ms), read the
// usage (when `usage`), remove, close. 0 or -errno of the first failure.
int end_step_cgroup(StepCgroup* cgroup, int timeout_ms, CgroupUsage* usage);

}  // namespace exactspawn
