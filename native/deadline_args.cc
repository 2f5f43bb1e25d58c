// deadline_args.cc — see deadline_args.h.
#include "deadline_args.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "system_error.h"

namespace exactspawn {

namespace {

// `number` (deadline.`key`) checked to be >= `min` (`min` is -1 for "-1:
// never" fields, else 0).
double CheckedAtLeast(Napi::Env env, double number, const char* who, const char* key, double min) {
  if (!(number >= min) || (min < 0 && number < 0 && number != -1)) {
    ThrowTypeError(env, std::string(who) + ": deadline." + key + " is out of range");
  }
  return number;
}

// A number >= `min` read from the plan object.
double NumberAtLeast(Napi::Env env, Napi::Object object, const char* who, const char* key,
                     double min) {
  Napi::Value value = object.Get(key);
  if (!value.IsNumber()) {
    ThrowTypeError(env, std::string(who) + ": deadline." + key + " must be a number");
  }
  return CheckedAtLeast(env, value.As<Napi::Number>().DoubleValue(), who, key, min);
}

int64_t Milliseconds(double ms) {
  return ms < 0 ? -1 : ms >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(std::ceil(ms));
}

// A signal number 1-64, or 0 where `none_allowed`.
int CheckedSignal(Napi::Env env, double number, const char* who, const char* key,
                  bool none_allowed) {
  CheckedAtLeast(env, number, who, key, 0);
  if (number > 64 || number != std::trunc(number) || (number == 0 && !none_allowed)) {
    ThrowTypeError(env, std::string(who) + ": deadline." + key + " must be a signal number");
  }
  return static_cast<int>(number);
}

int SignalNumber(Napi::Env env, Napi::Object object, const char* who, const char* key,
                 bool none_allowed) {
  return CheckedSignal(env, NumberAtLeast(env, object, who, key, 0), who, key, none_allowed);
}

}  // namespace

void ReadDeadline(Napi::Env env, Napi::Object deadline, const char* who, DeadlinePlan* plan) {
  plan->timeout_ms = Milliseconds(NumberAtLeast(env, deadline, who, "timeoutMs", -1));
  plan->end_signal = SignalNumber(env, deadline, who, "endSignal", false);
  Napi::Value to_group = deadline.Get("toGroup");
  if (!to_group.IsBoolean()) {
    ThrowTypeError(env, std::string(who) + ": deadline.toGroup must be a boolean");
  }
  plan->to_group = to_group.As<Napi::Boolean>().Value();
  plan->grace_ms = Milliseconds(NumberAtLeast(env, deadline, who, "graceMs", 0));
  plan->final_signal = SignalNumber(env, deadline, who, "finalSignal", false);
  plan->group_signal_at_exit = SignalNumber(env, deadline, who, "groupSignalAtExit", true);
}

void ReadDeadlineNumbers(Napi::Env env, Napi::Value numbers, const char* who, DeadlinePlan* plan) {
  // One napi_get_typedarray_info (each Napi::TypedArray accessor asks again).
  napi_typedarray_type type = napi_int8_array;
  size_t length = 0;
  void* data = nullptr;
  if (!numbers.IsTypedArray() ||
      napi_get_typedarray_info(env, numbers, &type, &length, &data, nullptr, nullptr) != napi_ok ||
      type != napi_float64_array || length != kDeadlineNumbers) {
    ThrowTypeError(env, std::string(who) + ": deadline must be a Float64Array of " +
                            std::to_string(kDeadlineNumbers) + " numbers");
  }
  const double* n = static_cast<const double*>(data);
  plan->timeout_ms = Milliseconds(CheckedAtLeast(env, n[0], who, "timeoutMs", -1));
  plan->end_signal = CheckedSignal(env, n[1], who, "endSignal", false);
  if (n[2] != 0 && n[2] != 1) {
    ThrowTypeError(env, std::string(who) + ": deadline.toGroup must be 0 or 1");
  }
  plan->to_group = n[2] == 1;
  plan->grace_ms = Milliseconds(CheckedAtLeast(env, n[3], who, "graceMs", 0));
  plan->final_signal = CheckedSignal(env, n[4], who, "finalSignal", false);
  plan->group_signal_at_exit = CheckedSignal(env, n[5], who, "groupSignalAtExit", true);
}

size_t ReadCaptureLimit(Napi::Env env, Napi::Object deadline, const char* who) {
  double limit = NumberAtLeast(env, deadline, who, "captureLimit", 0);
  return limit >= 9007199254740992.0 ? SIZE_MAX : static_cast<size_t>(std::floor(limit));
}

}  // namespace exactspawn
