// spawn_binding.cc — marshalling only. Reads the positional arguments of
// spawn_args.h (the engine's form: one call, no object to read; the exit
// arrives as onExit's arguments, see child_watch.h), or one options object
//   { file: string, argv: (string|Buffer)[], envp: (string|Buffer)[],
//     cwd?: string|null, stdio: int[] (>= 3; -1 = /dev/null, -2 = a new pipe),
//     capture?: int[] (pipe slots >= 1 the addon reads itself),
//     captureLimit?: number (bytes kept per captured pipe),
//     onOverflow?: function, setsid?: boolean, setpgroup?: boolean,
//     controls?: object (exec_controls_binding.h),
//     cleanup?: boolean (needs setsid or setpgroup, and startWatchdog() first:
//       the child's group is registered with the watchdog),
//     deadline?: the run's deadline plan (deadline_args.h; its captureLimit is
//       not read here), executed off the JavaScript thread by the deadline
//       keeper (core/deadline_keeper.h; a contained step's cgroup is killed
//       whole at its escalation),
//     contain?: object (contain_binding.h; needs startWatchdog() first: the
//       exit is delivered, with `tree`, once the step's cgroup is empty and
//       removed), onExit: function }
// checks every type (TypeError, never a silent coercion; strings must not
// contain NUL), makes the pipes (pipe2(O_CLOEXEC); the child reads slot 0's
// and writes every other slot's), calls spawn_process(), closes the child's
// ends and hands the pid and the captured read ends to WatchChild(). The
// parent's ends of the other pipes come back as `handle.fds` (-1 where a slot
// has none; absent when there are none). A failed posix_spawn(3) is thrown
// as a system error with syscall "posix_spawn" and path = file, after every
// pipe end is closed. With `controls` the child is started by
// core/child_path.h instead; its failures name the failing call (path = cwd
// for "chdir", else file); see spawn_args.h. No C++ exception crosses into
// Node.
#include "spawn_binding.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "child_watch.h"
#include "core/pid_namespace.h"
#include "core/watchdog.h"
#include "deadline_args.h"
#include "spawn_args.h"
#include "system_error.h"

namespace exactspawn {

namespace {

// The captured slots: distinct pipe slots other than stdin.
std::vector<int> ReadCapture(Napi::Env env, Napi::Object options, const std::vector<int>& stdio) {
  std::vector<int> slots;
  Napi::Value value = options.Get("capture");
  if (value.IsUndefined()) return slots;
  if (!value.IsArray()) ThrowTypeError(env, "spawn: capture must be an array of slots");
  Napi::Array array = value.As<Napi::Array>();
  uint32_t length = array.Length();
  if (length > stdio.size()) ThrowTypeError(env, "spawn: capture has more slots than stdio");
  for (uint32_t i = 0; i < length; ++i) {
    Napi::Value slot = array.Get(i);
    double number = slot.IsNumber() ? slot.As<Napi::Number>().DoubleValue() : -1;
    if (!(number >= 1 && number < static_cast<double>(stdio.size())) ||
        number != std::trunc(number) || stdio[static_cast<size_t>(number)] != kPipeSlot) {
      ThrowTypeError(env, "spawn: capture entries must be pipe slots other than 0");
    }
    int index = static_cast<int>(number);
    for (int seen : slots) {
      if (seen == index) ThrowTypeError(env, "spawn: capture repeats a slot");
    }
    slots.push_back(index);
  }
  return slots;
}

size_t ReadCaptureLimit(Napi::Env env, Napi::Object options) {
  Napi::Value value = options.Get("captureLimit");
  if (!value.IsNumber()) ThrowTypeError(env, "spawn: captureLimit must be a number");
  double limit = value.As<Napi::Number>().DoubleValue();
  if (!(limit > 0)) ThrowTypeError(env, "spawn: captureLimit must be > 0");
  // Fractional limits keep whole bytes; anything beyond memory is unlimited.
  if (limit >= 9007199254740992.0) return SIZE_MAX;
  return static_cast<size_t>(std::floor(limit));
}

// The rest of a spawn's options (capture, onOverflow, cleanup, deadline),
// from `options` (the object form, or the positional form's `more`).
struct SpawnExtras {
  CaptureRequest capture;
  bool cleanup = false;
  bool has_deadline = false;
  DeadlinePlan deadline;
};

void CheckDeadline(Napi::Env env, const SpawnArgs& args, const SpawnExtras& extras) {
  if (extras.has_deadline && extras.deadline.to_group && !args.setsid && !args.setpgroup) {
    ThrowTypeError(env, "spawn: deadline.toGroup needs setsid or setpgroup");
  }
}

// `with_deadline`: options.deadline too (the object form; the positional
// form passes it as numbers).
void ReadExtras(Napi::Env env, Napi::Object options, const SpawnArgs& args, bool with_deadline,
                SpawnExtras* extras) {
  CaptureRequest& capture = extras->capture;
  capture.slots = ReadCapture(env, options, args.stdio);
  if (!capture.slots.empty()) {
    capture.limit = ReadCaptureLimit(env, options);
    Napi::Value on_overflow = options.Get("onOverflow");
    if (!on_overflow.IsFunction()) ThrowTypeError(env, "spawn: onOverflow must be a function");
    capture.on_overflow = on_overflow;
  }
  extras->cleanup = OptionalBool(env, options, "cleanup");
  if (extras->cleanup && !args.setsid && !args.setpgroup) {
    ThrowTypeError(env, "spawn: cleanup needs setsid or setpgroup (a group of the child's own)");
  }
  if (extras->cleanup && !watchdog_configured()) {
    ThrowTypeError(env, "spawn: cleanup needs startWatchdog() first");
  }
  if (!with_deadline) return;
  Napi::Value deadline_value = options.Get("deadline");
  extras->has_deadline = !deadline_value.IsUndefined();
  if (extras->has_deadline) {
    if (!deadline_value.IsObject()) ThrowTypeError(env, "spawn: deadline must be an object");
    ReadDeadline(env, deadline_value.As<Napi::Object>(), "spawn", &extras->deadline);
  }
}

Napi::Value SpawnChecked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  SpawnArgs args;
  SpawnExtras extras;
  Napi::Value on_exit;
  // The positional form (spawn_args.h) delivers the exit as arguments.
  const bool positional = info.Length() >= kArgOnExit + 1;
  if (positional) {
    if (info.Length() > kArgTotal) ThrowTypeError(env, "spawn: too many arguments");
    ReadPositionalSpawnArgs(env, info, &args);
    on_exit = info[kArgOnExit];
    if (!info[kArgMore].IsUndefined()) {
      ReadExtras(env, info[kArgMore].As<Napi::Object>(), args, false, &extras);
    }
    extras.has_deadline = !info[kArgDeadline].IsUndefined();
    if (extras.has_deadline)
      ReadDeadlineNumbers(env, info[kArgDeadline], "spawn", &extras.deadline);
  } else {
    if (info.Length() != 1 || !info[0].IsObject()) {
      ThrowTypeError(env, "spawn: expected exactly one options object");
    }
    Napi::Object options = info[0].As<Napi::Object>();
    ReadSpawnArgs(env, options, &args);
    ReadExtras(env, options, args, true, &extras);
    on_exit = options.Get("onExit");
  }
  CheckDeadline(env, args, extras);
  if (!on_exit.IsFunction()) ThrowTypeError(env, "spawn: onExit must be a function");
  const CaptureRequest& capture = extras.capture;

  bool uncaptured_pipe = false;
  for (size_t i = 0; i < args.stdio.size(); ++i) {
    if (args.stdio[i] != kPipeSlot) continue;
    bool captured = false;
    for (int slot : capture.slots) captured = captured || static_cast<size_t>(slot) == i;
    uncaptured_pipe = uncaptured_pipe || !captured;
  }

  StartedChild child(args.stdio.size());
  StartChild(env, args, &child);
  std::vector<int>& parent_ends = child.parent_ends.fds;
  StartReport start;
  start.fd = child.start_status.fd;
  if (start.fd >= 0) {
    start.file = args.file;
    start.cwd = args.cwd;
  }
  // A PID-namespace step: its leader, watched by the host too (leader_watch.cc);
  // closed here unless the watch took it.
  OwnedFd leader_pidfd;
  if (start.fd >= 0 && args.controls.controls.pid_namespace != PidNamespace::kNone) {
    leader_pidfd.fd = receive_leader_pidfd(start.fd);
    start.leader_pidfd = leader_pidfd.fd;
  }
  // The watch owns the pidfd from here on, whatever happens.
  const int pidfd = child.pidfd.fd;
  child.pidfd.fd = -1;
  Napi::Object handle = WatchChild(
      env, child.pid, on_exit.As<Napi::Function>(), capture, &parent_ends, extras.cleanup, &start,
      extras.has_deadline ? &extras.deadline : nullptr, &child.cgroup, positional, pidfd);
  child.start_status.fd = start.fd;  // -1 once the watch owns it
  leader_pidfd.fd = start.leader_pidfd;
  if (uncaptured_pipe) {
    Napi::Array fds = Napi::Array::New(env, parent_ends.size());
    for (size_t i = 0; i < parent_ends.size(); ++i) {
      fds.Set(static_cast<uint32_t>(i), Napi::Number::New(env, parent_ends[i]));
    }
    handle.Set("fds", fds);
    for (int& fd : parent_ends) fd = -1;  // JavaScript owns them now
  }
  return handle;
}

}  // namespace

Napi::Value Spawn(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return SpawnChecked(info); });
}

}  // namespace exactspawn
