// spawn_sync_binding.cc — marshalling only. Reads spawn()'s shared fields
// (spawn_args.h) plus
//   input?: Buffer (written to the stdin pipe, slot 0 must then be -2),
//   captureLimit: number (bytes kept per captured pipe),
//   timeout?: number (ms), killSignal: int, killGraceMs: number (ms)
// where stdio slots 1 and 2 may be -2 (captured) and no other slot may be a
// pipe (nothing could read it while this thread waits). Starts the child,
// hands it to run_sync() and returns its exit and output. No event loop
// turn, no thread, no threadpool. No C++ exception crosses into Node.
#include "spawn_sync_binding.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <exception>
#include <string>

#include "core/run_sync.h"
#include "core/signal_names.h"
#include "spawn_args.h"
#include "system_error.h"

namespace exactspawn {

namespace {

double NonNegativeNumber(Napi::Env env, Napi::Object options, const char* key, bool optional) {
  Napi::Value value = options.Get(key);
  if (optional && value.IsUndefined()) return -1;
  if (!value.IsNumber())
    ThrowTypeError(env, std::string("spawnSync: ") + key + " must be a number");
  double number = value.As<Napi::Number>().DoubleValue();
  if (!(number >= 0)) ThrowTypeError(env, std::string("spawnSync: ") + key + " must be >= 0");
  return number;
}

int64_t Milliseconds(double ms) {
  return ms >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(std::ceil(ms));
}

Napi::Value OutputOf(Napi::Env env, const std::vector<char>& bytes, bool captured) {
  if (!captured) return env.Null();
  return Napi::Buffer<char>::Copy(env, bytes.data(), bytes.size());
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
  double limit = NonNegativeNumber(env, options, "captureLimit", false);
  double timeout = NonNegativeNumber(env, options, "timeout", true);
  double grace = NonNegativeNumber(env, options, "killGraceMs", false);
  double kill_signal = NonNegativeNumber(env, options, "killSignal", false);
  if (kill_signal < 1 || kill_signal > 64 || kill_signal != std::trunc(kill_signal)) {
    ThrowTypeError(env, "spawnSync: killSignal must be a signal number");
  }

  StartedChild child(args.stdio.size());
  StartChild(env, args, &child);

  SyncRun run;
  run.pid = child.pid;
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
  run.limit = limit >= 9007199254740992.0 ? SIZE_MAX : static_cast<size_t>(std::floor(limit));
  run.timeout_ms = timeout < 0 ? -1 : Milliseconds(timeout);
  run.kill_signal = static_cast<int>(kill_signal);
  run.kill_grace_ms = Milliseconds(grace);
  run.own_group = args.setsid || args.setpgroup;
  const bool captured[2] = {run.output_fds[0] >= 0, run.output_fds[1] >= 0};

  SyncOutcome outcome;
  int err = run_sync(run, &outcome);
  if (err < 0) throw SystemError(env, err, "spawnSync", &args.file);
  // A credential-changing child was not waited for at its start: the run has
  // reaped it, so its report (if it failed before exec) is in the pipe now.
  ThrowIfStartFailed(env, args, &child);

  Napi::Object result = Napi::Object::New(env);
  result.Set("pid", Napi::Number::New(env, child.pid));
  const ChildExit& exit = outcome.exit;
  result.Set("exitCode", exit.exited ? Napi::Number::New(env, exit.exit_code) : env.Null());
  result.Set("signal",
             exit.signal != 0 ? Napi::String::New(env, signal_name(exit.signal)) : env.Null());
  result.Set("userCpuMicros", Napi::Number::New(env, static_cast<double>(exit.user_cpu_micros)));
  result.Set("systemCpuMicros",
             Napi::Number::New(env, static_cast<double>(exit.system_cpu_micros)));
  Napi::Array output = Napi::Array::New(env, 3);
  output.Set(0u, env.Null());
  output.Set(1u, OutputOf(env, outcome.output[0], captured[0]));
  output.Set(2u, OutputOf(env, outcome.output[1], captured[1]));
  result.Set("output", output);
  const char* reason = outcome.reason == SyncKillReason::kTimeout    ? "timeout"
                       : outcome.reason == SyncKillReason::kOverflow ? "maxBuffer"
                                                                     : nullptr;
  result.Set("reason", reason != nullptr ? Napi::String::New(env, reason) : env.Null());
  return result;
}

}  // namespace

Napi::Value SpawnSync(const Napi::CallbackInfo& info) {
  try {
    return SpawnSyncChecked(info);
  } catch (const Napi::Error&) {
    throw;  // node-addon-api turns it into a pending JS exception
  } catch (const std::exception& e) {
    throw Napi::Error::New(info.Env(), std::string("exactspawn: ") + e.what());
  } catch (...) {
    throw Napi::Error::New(info.Env(), "exactspawn: unexpected native failure");
  }
}

}  // namespace exactspawn
