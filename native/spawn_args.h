// spawn_args.h — marshalling shared by spawn() and spawnSync(): reads the
// fields both take from one options object
//   { file: string, argv: (string|Buffer)[] | Buffer, argvCount?: number,
//     envp: (string|Buffer)[] | Buffer, envpCount?: number,
//     cwd?: string|null, stdio: int[] (>= 3; -1 = /dev/null, -2 = a new pipe),
//     setsid?: boolean, setpgroup?: boolean,
//     controls?: object (exec_controls_binding.h),
//     sandbox?: object (sandbox_binding.h),
//     contain?: object (contain_binding.h: the child starts in a cgroup of
//       its own, through the child path) }
// checking every type (TypeError, never a silent coercion; strings must not
// contain NUL). argv and envp are either lists of strings, or one Buffer of
// NUL-terminated strings packed in order (the last byte NUL, empty for none)
// with their count in argvCount / envpCount: a count that does not match the
// NULs found is refused, so a NUL inside a string can never pass as two. The
// packed bytes are not copied: StartChild checks them and points into them
// after the last option is read, so no JavaScript (a getter, a Proxy trap)
// runs between that check and the synchronous spawn. It makes the requested pipes
// (pipe2(O_CLOEXEC); the child reads slot 0's and writes every other slot's) and starts the child
// with spawn_process(), or with `controls` through the addon's own child path (core/child_path.h).
// No policy.
#pragma once

#include <napi.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "contain_binding.h"
#include "core/child_exit.h"
#include "exec_controls_binding.h"
#include "sandbox_binding.h"

namespace exactspawn {

// A slot value asking for a new pipe.
constexpr int kPipeSlot = -2;

// The char* array execve wants: into NUL-terminated copies of a JS string
// list, or into a packed Buffer (pointers made by StartChild).
struct CStringList {
  std::vector<std::string> storage;
  std::vector<char*> pointers;
  bool is_packed = false;
  Napi::Value packed;  // a Buffer, held by the call's handle scope
  size_t packed_count = 0;
};

// Closes every fd still >= 0 when it goes out of scope.
struct OwnedFds {
  std::vector<int> fds;
  explicit OwnedFds(size_t count) : fds(count, -1) {}
  ~OwnedFds();
  OwnedFds(const OwnedFds&) = delete;
  OwnedFds& operator=(const OwnedFds&) = delete;
};

// One fd, closed when it goes out of scope if still >= 0 (no allocation).
struct OwnedFd {
  int fd = -1;
  OwnedFd() = default;
  ~OwnedFd();
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
};

struct SpawnArgs {
  std::string file;
  CStringList argv;
  CStringList envp;
  std::string cwd;
  bool has_cwd = false;
  std::vector<int> stdio;  // as given: fds, -1 or kPipeSlot
  bool setsid = false;
  bool setpgroup = false;
  bool child_path = false;  // controls were given: start through core/child_path.h
  ExecControlsInput controls;
  bool sandboxed = false;  // options.sandbox was given (implies the child path)
  SandboxInput sandbox;
  bool contained = false;  // options.contain was given (the child path; contain_binding.h)
  ContainInput contain;
};

// Reads and checks the shared fields; throws a TypeError on any bad one.
void ReadSpawnArgs(Napi::Env env, Napi::Object options, SpawnArgs* args);

// The positional form of spawn() (one call, no option object to read):
//   spawn(file, argv, argvCount, envp, envpCount, cwd, stdio, flags, onExit,
//         deadline?, more?)
// with argv/envp as in the options object (argvCount/envpCount read for a
// packed Buffer), flags a sum of the kSpawn* bits, deadline undefined or the
// run's plan as numbers (deadline_args.h ReadDeadlineNumbers), and `more`
// undefined or an object with the rarely given keys (controls, sandbox,
// contain; spawn() reads capture, captureLimit, onOverflow and cleanup from
// it too).
// Unlike the options object's form, a child without controls takes the child
// path unless kSpawnPosixSpawn is set.
enum SpawnArg {
  kArgFile,
  kArgArgv,
  kArgArgvCount,
  kArgEnvp,
  kArgEnvpCount,
  kArgCwd,
  kArgStdio,
  kArgFlags,
  kArgOnExit,
  kArgDeadline,
  kArgMore,
  kArgTotal,
};
constexpr int kSpawnSetsid = 1;
constexpr int kSpawnSetpgroup = 2;
constexpr int kSpawnPosixSpawn = 4;  // posix_spawn(3) for a child without controls
constexpr int kSpawnFlagsAll = 7;

// Reads the positional form's shared arguments; TypeError on any bad one.
void ReadPositionalSpawnArgs(Napi::Env env, const Napi::CallbackInfo& info, SpawnArgs* args);

// Optional boolean field `key` (false when absent); TypeError otherwise.
bool OptionalBool(Napi::Env env, Napi::Object options, const char* key);

// A child whose pipes are made and which has been started. The parent's ends
// of the pipes are in parent_ends (by slot, -1 where none); the child's ends
// are already closed. On failure everything is closed and a system error
// is thrown: syscall "pipe2", "posix_spawn", or the child path's failing call
// (path: StartFailurePath). A child that changes its credentials is not
// waited for (core/child_path.h): start_status then holds its start-status
// pipe, to be read once the child is reaped (ThrowIfStartFailed, or the exit
// watch).
// A contained child's cgroup stays here until a watch takes it over (its
// path is then empty); one still here when this goes out of scope (a failed
// start or watch) is killed, waited for a moment and removed.
struct StartedChild {
  pid_t pid = 0;
  OwnedFds parent_ends;
  OwnedFd start_status;
  OwnedFd pidfd;  // the child's pidfd from its clone (-1: none; the watch opens one)
  StepCgroup cgroup;
  explicit StartedChild(size_t slots) : parent_ends(slots) {}
  ~StartedChild();
  StartedChild(const StartedChild&) = delete;
  StartedChild& operator=(const StartedChild&) = delete;
};

// The path a failed start names: the one its step named (a sandbox path, a
// /proc file), else the cwd for "chdir", else the file.
const std::string& StartFailurePath(const ChildPathFailure& failure, const std::string& file,
                                    const std::string& cwd);

// For a reaped child: throws the failure its start-status pipe reports, if
// any; a PID namespace's init reports its leader's end there instead, which
// replaces the exit fields of *exit.
void ThrowIfStartFailed(Napi::Env env, const SpawnArgs& args, StartedChild* child, ChildExit* exit);

// Checks the packed lists (TypeError) and then starts the child without
// running any JavaScript before the spawn returns.
void StartChild(Napi::Env env, SpawnArgs& args, StartedChild* child);

}  // namespace exactspawn
