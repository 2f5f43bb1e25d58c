// child_handle.cc — marshalling only: the ChildHandle JavaScript gets back
// from spawn(), { pid, kill, killGroup, killGroupAtExit, endCaptureAtExit,
// endNow, ending, ref, unref, hasRef, takeOver }, over the watch in
// watch_state.h and the run's ending (core/deadline_keeper.h). Every method
// runs inside Marshal() (system_error.h).
//
// Group signals go out only while the leader is unreaped: until the reap its
// process (a zombie at worst) pins the process-group id, after it the number
// may belong to anyone. The reap and these methods run on the same thread,
// so the check cannot race the reap.
#include <cerrno>
#include <cmath>
#include <memory>
#include <string>

#include "core/child_exit.h"
#include "system_error.h"
#include "watch_state.h"

namespace exactspawn {

class ChildHandle : public Napi::ObjectWrap<ChildHandle> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "ChildHandle",
        {InstanceAccessor<&ChildHandle::Pid>("pid"), InstanceMethod<&ChildHandle::Kill>("kill"),
         InstanceMethod<&ChildHandle::KillGroup>("killGroup"),
         InstanceMethod<&ChildHandle::KillGroupAtExit>("killGroupAtExit"),
         InstanceMethod<&ChildHandle::EndCaptureAtExit>("endCaptureAtExit"),
         InstanceMethod<&ChildHandle::EndNow>("endNow"),
         InstanceMethod<&ChildHandle::Ending>("ending"), InstanceMethod<&ChildHandle::Ref>("ref"),
         InstanceMethod<&ChildHandle::Unref>("unref"),
         InstanceMethod<&ChildHandle::HasRef>("hasRef"),
         InstanceMethod<&ChildHandle::TakeOver>("takeOver")});
  }

  explicit ChildHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ChildHandle>(info) {}

  pid_t pid = 0;           // the child's, for ever (an accessor: no property set per spawn)
  Watch* watch = nullptr;  // null once the exit has been delivered or the env torn down
  std::shared_ptr<RunEnding> ending;  // null when spawn had no deadline plan

 private:
  Napi::Value Pid(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), pid); }

  // The watch while its child is unreaped, else null.
  Watch* Unreaped() const {
    return watch == nullptr || watch->life != Life::kWatching ? nullptr : watch;
  }

  static int SignalArg(const Napi::CallbackInfo& info, const char* what) {
    if (info.Length() < 1 || !info[0].IsNumber()) {
      ThrowTypeError(info.Env(), std::string(what) + ": the signal must be a number");
    }
    double sig = info[0].As<Napi::Number>().DoubleValue();
    // Range first: converting NaN or an out-of-range double to int is undefined.
    if (!(sig >= 0 && sig <= 64) || sig != std::trunc(sig)) {
      ThrowTypeError(info.Env(),
                     std::string(what) + ": the signal must be an integer from 0 to 64");
    }
    return static_cast<int>(sig);
  }

  // 0 or -errno; -ESRCH once the child has been reaped (its pid may be reused).
  Napi::Value Kill(const Napi::CallbackInfo& info) {
    return Marshal(info, [&] {
      int sig = SignalArg(info, "kill");
      Watch* w = Unreaped();
      return Napi::Number::New(info.Env(), w == nullptr ? -ESRCH : signal_pidfd(w->pidfd, sig));
    });
  }

  // kill(-pid) while the leader is unreaped, else -ESRCH. The caller
  // (TypeScript) only asks for groups it created.
  Napi::Value KillGroup(const Napi::CallbackInfo& info) {
    return Marshal(info, [&] {
      int sig = SignalArg(info, "killGroup");
      Watch* w = Unreaped();
      return Napi::Number::New(info.Env(), w == nullptr ? -ESRCH : signal_group(w->pid, sig));
    });
  }

  // Asks for `sig` to reach the rest of the group when the leader exits,
  // sent before the reap; 0, or -ESRCH when the leader is already reaped.
  Napi::Value KillGroupAtExit(const Napi::CallbackInfo& info) {
    return Marshal(info, [&] {
      int sig = SignalArg(info, "killGroupAtExit");
      Watch* w = Unreaped();
      if (w != nullptr) w->group_exit_signal = sig;
      return Napi::Number::New(info.Env(), w == nullptr ? -ESRCH : 0);
    });
  }

  // Ends the captured output once the child is reaped (now, if it is): the
  // exit is then delivered with what was read, after this method returns.
  Napi::Value EndCaptureAtExit(const Napi::CallbackInfo& info) {
    return Marshal(info, [&] {
      Watch* w = watch;
      if (w != nullptr) {
        w->end_capture_at_exit = true;
        if (w->life == Life::kReaped) {
          EndCapture(w);
          QueueCallbacks(w);
        }
      }
      return info.Env().Undefined();
    });
  }

  // { byDeadline, leaderRunning, at } (at: the end signal's time, CLOCK_MONOTONIC ms, or null).
  static Napi::Value RecordToJs(Napi::Env env, const EndingRecord& record) {
    Napi::Object out = Napi::Object::New(env);
    out.Set("byDeadline", Napi::Boolean::New(env, record.by_deadline));
    out.Set("leaderRunning", Napi::Boolean::New(env, record.leader_running));
    out.Set("at", record.at_ms > 0 ? Napi::Number::New(env, record.at_ms) : env.Null());
    return out;
  }

  // Begins the run's ending now unless one has begun (the keeper's timeout,
  // or an earlier call) and returns the first one; once the run is over, a
  // record of no ending. null without a deadline plan.
  Napi::Value EndNow(const Napi::CallbackInfo& info) {
    return Marshal(info, [&]() -> Napi::Value {
      if (ending == nullptr) return info.Env().Null();
      return RecordToJs(info.Env(), ending->begin(false));
    });
  }

  // The first ending so far, or null (none yet, or no deadline plan).
  Napi::Value Ending(const Napi::CallbackInfo& info) {
    return Marshal(info, [&]() -> Napi::Value {
      EndingRecord record = ending == nullptr ? EndingRecord() : ending->record();
      if (!record.begun) return info.Env().Null();
      return RecordToJs(info.Env(), record);
    });
  }

  void SetRef(bool on) {
    if (watch == nullptr) return;
    watch->ref = on;
    UpdateHold(watch);
  }

  Napi::Value Ref(const Napi::CallbackInfo& info) {
    return Marshal(info, [&] {
      SetRef(true);
      return info.Env().Undefined();
    });
  }

  Napi::Value Unref(const Napi::CallbackInfo& info) {
    return Marshal(info, [&] {
      SetRef(false);
      return info.Env().Undefined();
    });
  }

  Napi::Value HasRef(const Napi::CallbackInfo& info) {
    return Marshal(info, [&] {
      bool has = watch != nullptr && Holds(watch);
      return Napi::Boolean::New(info.Env(), has);
    });
  }

  // takeOver(slot) → { fd, bytes } | null: stops reading a captured pipe and
  // hands its fd (-1 once it ended) and the bytes read so far to JavaScript.
  // An exit this makes due is delivered after it returns, never inside it.
  Napi::Value TakeOver(const Napi::CallbackInfo& info) {
    return Marshal(info, [&]() -> Napi::Value {
      Napi::Env env = info.Env();
      if (info.Length() < 1 || !info[0].IsNumber()) {
        ThrowTypeError(env, "takeOver: expected a slot");
      }
      double slot = info[0].As<Napi::Number>().DoubleValue();
      if (watch == nullptr) return env.Null();
      Watch* w = watch;
      Reader* r = nullptr;
      for (auto& candidate : w->readers) {
        if (!candidate->taken && static_cast<double>(candidate->slot) == slot) {
          r = candidate.get();
        }
      }
      if (r == nullptr) return env.Null();
      // Every value first: if one cannot be made, the reader is untouched.
      int fd = r->active ? r->fd : -1;
      Napi::Object out = Napi::Object::New(env);
      out.Set("bytes", Napi::Buffer<char>::Copy(env, r->bytes.data(), r->bytes.size()));
      out.Set("fd", Napi::Number::New(env, fd));
      StopReader(r, false);
      r->fd = -1;  // JavaScript owns it now (or it had ended)
      r->taken = true;
      std::string().swap(r->bytes);
      QueueCallbacks(w);  // the exit may be due now: delivered after this returns
      return out;
    });
  }
};

Napi::Function DefineChildHandle(Napi::Env env) { return ChildHandle::Define(env); }

void AttachHandle(Napi::Object object, Watch* w) {
  ChildHandle* handle = ChildHandle::Unwrap(object);
  handle->pid = w->pid;
  handle->watch = w;
  handle->ending = w->ending;
  w->handle = handle;
}

void DetachHandle(ChildHandle* handle) { handle->watch = nullptr; }

}  // namespace exactspawn
