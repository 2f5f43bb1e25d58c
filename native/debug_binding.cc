// debug_binding.cc — marshalling only; see debug_binding.h.
#include "debug_binding.h"

#include <atomic>
#include <cmath>

#include "core/child_path.h"
#include "core/clone3.h"
#include "core/deadline_keeper.h"
#include "core/reap.h"
#include "core/watchdog.h"
#include "system_error.h"
#include "watch_state.h"

namespace exactspawn {

namespace {

std::atomic<int> refusals{0};

}  // namespace

bool DebugRefuseNotify() {
  int left = refusals.load(std::memory_order_relaxed);
  while (left > 0) {
    if (refusals.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) return true;
  }
  return false;
}

Napi::Value DebugRefuseNotifies(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] {
    if (info.Length() != 1 || !info[0].IsNumber()) {
      ThrowTypeError(info.Env(), "debugRefuseNotifies(count): count must be a number");
    }
    double count = info[0].As<Napi::Number>().DoubleValue();
    if (!(count >= 0 && count <= 1000) || count != std::trunc(count)) {
      ThrowTypeError(info.Env(), "debugRefuseNotifies(count): count must be an integer 0-1000");
    }
    refusals.store(static_cast<int>(count), std::memory_order_relaxed);
    return info.Env().Undefined();
  });
}

Napi::Value DebugRefuseClone3Pidfd(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] {
    if (info.Length() != 1 || !info[0].IsNumber()) {
      ThrowTypeError(info.Env(), "debugRefuseClone3Pidfd(count): count must be a number");
    }
    double count = info[0].As<Napi::Number>().DoubleValue();
    if (!(count >= 0 && count <= 1000) || count != std::trunc(count)) {
      ThrowTypeError(info.Env(), "debugRefuseClone3Pidfd(count): count must be an integer 0-1000");
    }
    clone3_refuse_pidfd(static_cast<int>(count));
    return info.Env().Undefined();
  });
}

Napi::Value DebugRefuseHelperExec(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] {
    const char* usage =
        "debugRefuseHelperExec(errno, count): errno must be an integer 0-4095, count 0-3";
    if (info.Length() != 2 || !info[0].IsNumber() || !info[1].IsNumber()) {
      ThrowTypeError(info.Env(), usage);
    }
    double error = info[0].As<Napi::Number>().DoubleValue();
    double count = info[1].As<Napi::Number>().DoubleValue();
    if (!(error >= 0 && error <= 4095) || error != std::trunc(error) ||
        !(count >= 0 && count <= 3) || count != std::trunc(count)) {
      ThrowTypeError(info.Env(), usage);
    }
    set_helper_exec_refusal(static_cast<int>(error), static_cast<int>(count));
    return info.Env().Undefined();
  });
}

Napi::Value DebugHoldWatchdogLaunch(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] {
    const char* usage = "debugHoldWatchdogLaunch(count): count must be an integer 0-3";
    if (info.Length() != 1 || !info[0].IsNumber()) ThrowTypeError(info.Env(), usage);
    double count = info[0].As<Napi::Number>().DoubleValue();
    if (!(count >= 0 && count <= 3) || count != std::trunc(count)) {
      ThrowTypeError(info.Env(), usage);
    }
    watchdog_hold_next_launches(static_cast<int>(count));
    return info.Env().Undefined();
  });
}

Napi::Value DebugCounters(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] {
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("reapRetries", Napi::Number::New(info.Env(), static_cast<double>(reap_retries())));
    out.Set("invalidWatchMoves",
            Napi::Number::New(info.Env(), static_cast<double>(InvalidWatchMoves())));
    out.Set("clone3Children",
            Napi::Number::New(info.Env(), static_cast<double>(clone3_children())));
    out.Set("deadlinesPending",
            Napi::Number::New(info.Env(), static_cast<double>(deadline_keeper_pending())));
    return out;
  });
}

}  // namespace exactspawn
