// spawn_sync_binding.cc — marshalling only. Reads spawn()'s shared fields
// (spawn_args.h) plus
//   input?: Buffer (written to the stdin pipe, slot 0 must then be -2),
//   deadline: the run's deadline plan as plain numbers (nativeDeadline in
//     src/spawn/deadline-plan.ts: timeoutMs, endSignal, toGroup, graceMs,
//     finalSignal, groupSignalAtExit, captureLimit)
// where stdio slots 1 and 2 may be -2 (captured) and no other slot may be a
// pipe (nothing could read it while this thread waits). Starts the child,
// hands it to run_sync() and returns its exit, output and endings. No event
// loop turn, no thread, no threadpool. No C++ exception crosses into Node.
#include "spawn_sync_binding.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/pid_namespace.h"
#include "core/run_sync.h"
#include "core/signal_names.h"
#include "deadline_args.h"
#include "spawn_args.h"
#include "system_error.h"
#include "tree_usage.h"

namespace exactspawn {

namespace {

const char* CauseName(SyncEndingCause cause) {
  return cause == SyncEndingCause::kTimeout ? "timeout" : "maxBuffer";
}

Napi::Value OutputOf(Napi::Env env, const std::vector<char>& bytes, bool captured) {
  if (!captured) return env.Null();
  return Napi::Buffer<char>::Copy(env, bytes.data(), bytes.size());
}

Napi::Value Known(Napi::Env env, int64_t number) {
  return number < 0 ? env.Null() : Napi::Number::New(env, static_cast<double>(number));
}

// result.tree: what a contained step's whole tree used (as the exit watch's).
Napi::Object TreeOf(Napi::Env env, const CgroupUsage& usage) {
  Napi::Object tree = Napi::Object::New(env);
  for (const TreeUsageField& field : kTreeUsageFields) {
    tree.Set(field.key, Known(env, usage.*field.member));
  }
  return tree;
}

Napi::Value SpawnSyncChecked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsObject()) {
    ThrowTypeError(env, "spawnSync: expected exactly one options object");
  }
  Napi::Object options = info[0].As<Napi::Object>();
  SpawnArgs args;
  ReadSpawnArgs(env, options, &args);
  for (size_t i = 3; i < args.stdio.size(); ++i) {
    if (args.stdio[i] == kPipeSlot) ThrowTypeError(env, "spawnSync: only slots 0-2 can be pipes");
  }
  Napi::Value input_value = options.Get("input");
  const bool has_input = !input_value.IsUndefined();
  if (has_input && !input_value.IsBuffer()) {
    ThrowTypeError(env, "spawnSync: input must be a Buffer");
  }
  if (has_input != (args.stdio[0] == kPipeSlot)) {
    ThrowTypeError(env, "spawnSync: stdin is a pipe exactly when input is given");
  }
  SyncRun run;
  Napi::Value deadline = options.Get("deadline");
  if (!deadline.IsObject()) ThrowTypeError(env, "spawnSync: deadline must be an object");
  ReadDeadline(env, deadline.As<Napi::Object>(), "spawnSync", &run.deadline);
  run.limit = ReadCaptureLimit(env, deadline.As<Napi::Object>(), "spawnSync");
  if (run.deadline.to_group && !(args.setsid || args.setpgroup)) {
    ThrowTypeError(env, "spawnSync: deadline.toGroup needs setsid or setpgroup");
  }

  StartedChild child(args.stdio.size());
  StartChild(env, args, &child);

  run.pid = child.pid;
  run.pidfd = child.pidfd.fd;
  child.pidfd.fd = -1;  // run_sync owns it now
  run.cgroup_path = child.cgroup.path.empty() ? nullptr : child.cgroup.path.c_str();
  // A PID-namespace step: its leader, watched by the run too (run_sync.h).
  if (child.start_status.fd >= 0 && args.controls.controls.pid_namespace != PidNamespace::kNone) {
    run.leader_pidfd = receive_leader_pidfd(child.start_status.fd);
  }
  std::vector<int>& ends = child.parent_ends.fds;
  run.stdin_fd = ends[0];
  run.output_fds[0] = ends[1];
  run.output_fds[1] = ends[2];
  for (int& fd : ends) fd = -1;  // run_sync owns them now
  if (has_input) {
    Napi::Buffer<char> input = input_value.As<Napi::Buffer<char>>();
    run.input = input.Data();
    run.input_length = input.Length();
  }
  const bool captured[2] = {run.output_fds[0] >= 0, run.output_fds[1] >= 0};

  SyncOutcome outcome;
  StepFailure failure;
  int run_error = run_sync(run, &outcome, &failure);
  // A contained step settles once its tree is gone (the run killed it at the
  // leader's exit); waited for here, on POLLPRI, never by sleeping.
  CgroupUsage usage;
  const bool contained = !child.cgroup.path.empty();
  if (contained) end_step_cgroup(&child.cgroup, -1, &usage);
  if (run_error < 0) throw SystemError(env, failure, &args.file);
  // The leader's status from its zombie, where the run killed its init; the
  // init's own report (read next) replaces it when there is one.
  if (outcome.leader_exit_known) set_exit_status(outcome.leader_wait_status, &outcome.exit);
  // A credential-changing child was not waited for at its start: the run has
  // reaped it, so its report (if it failed before exec) is in the pipe now.
  ThrowIfStartFailed(env, args, &child, &outcome.exit);

  Napi::Object result = Napi::Object::New(env);
  result.Set("pid", Napi::Number::New(env, child.pid));
  const ChildExit& exit = outcome.exit;
  result.Set("exitCode", exit.exited ? Napi::Number::New(env, exit.exit_code) : env.Null());
  result.Set("signal",
             exit.signal != 0 ? Napi::String::New(env, signal_name(exit.signal)) : env.Null());
  result.Set("userCpuMicros", Napi::Number::New(env, static_cast<double>(exit.user_cpu_micros)));
  result.Set("systemCpuMicros",
             Napi::Number::New(env, static_cast<double>(exit.system_cpu_micros)));
  result.Set("maxRssKiB", exit.max_rss_kib < 0
                              ? env.Null()
                              : Napi::Number::New(env, static_cast<double>(exit.max_rss_kib)));
  Napi::Array output = Napi::Array::New(env, 3);
  output.Set(0u, env.Null());
  output.Set(1u, OutputOf(env, outcome.output[0], captured[0]));
  output.Set(2u, OutputOf(env, outcome.output[1], captured[1]));
  result.Set("output", output);
  Napi::Array endings = Napi::Array::New(env, outcome.ending_count);
  for (int i = 0; i < outcome.ending_count; ++i) {
    Napi::Object ending = Napi::Object::New(env);
    ending.Set("cause", Napi::String::New(env, CauseName(outcome.endings[i].cause)));
    ending.Set("leaderRunning", Napi::Boolean::New(env, outcome.endings[i].leader_running));
    endings.Set(static_cast<uint32_t>(i), ending);
  }
  result.Set("endings", endings);
  result.Set("killedAt",
             outcome.killed_at_ms > 0 ? Napi::Number::New(env, outcome.killed_at_ms) : env.Null());
  if (contained) result.Set("tree", TreeOf(env, usage));
  return result;
}

}  // namespace

Napi::Value SpawnSync(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return SpawnSyncChecked(info); });
}

}  // namespace exactspawn
