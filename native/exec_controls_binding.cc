// exec_controls_binding.cc — see exec_controls_binding.h.
#include "exec_controls_binding.h"

#include <signal.h>

#include <cmath>
#include <string>

#include "core/resource_limits.h"
#include "system_error.h"

namespace exactspawn {

namespace {

double IntegerIn(Napi::Env env, Napi::Value value, const std::string& what, double low,
                 double high) {
  double number = value.IsNumber() ? value.As<Napi::Number>().DoubleValue() : NAN;
  // Range first: NaN and out-of-range doubles must never reach an integer cast.
  if (!(number >= low && number <= high) || number != std::trunc(number)) {
    ThrowTypeError(env, "spawn: controls." + what + " must be an integer in [" +
                            std::to_string(static_cast<long long>(low)) + ", " +
                            std::to_string(static_cast<long long>(high)) + "]");
  }
  return number;
}

constexpr double kMaxId = 4294967294.0;  // (uid_t)-1 means "unchanged" to the kernel

rlim_t LimitValue(Napi::Env env, Napi::Value value, const std::string& what) {
  double number = value.IsNumber() ? value.As<Napi::Number>().DoubleValue() : NAN;
  if (number == INFINITY) return RLIM_INFINITY;
  if (!(number >= 0 && number <= 9007199254740991.0) || number != std::trunc(number)) {
    ThrowTypeError(env, "spawn: controls." + what + " must be a whole number or Infinity");
  }
  return static_cast<rlim_t>(number);
}

void ReadLimits(Napi::Env env, Napi::Value value, ExecControlsInput* input) {
  if (!value.IsArray()) ThrowTypeError(env, "spawn: controls.rlimits must be an array");
  Napi::Array array = value.As<Napi::Array>();
  uint32_t length = array.Length();
  if (length > 64) ThrowTypeError(env, "spawn: controls.rlimits has too many entries");
  for (uint32_t i = 0; i < length; ++i) {
    std::string where = "rlimits[" + std::to_string(i) + "]";
    Napi::Value entry = array.Get(i);
    if (!entry.IsArray() || entry.As<Napi::Array>().Length() != 3) {
      ThrowTypeError(env, "spawn: controls." + where + " must be [name, soft, hard]");
    }
    Napi::Array triple = entry.As<Napi::Array>();
    Napi::Value name = triple.Get(0u);
    int resource = name.IsString() ? rlimit_resource(name.As<Napi::String>().Utf8Value()) : -1;
    if (resource < 0) ThrowTypeError(env, "spawn: controls." + where + " names no resource");
    ResourceLimit limit;
    limit.resource = resource;
    limit.soft = LimitValue(env, triple.Get(1u), where + ".soft");
    limit.hard = LimitValue(env, triple.Get(2u), where + ".hard");
    input->limits.push_back(limit);
  }
}

}  // namespace

bool ReadExecControls(Napi::Env env, Napi::Object options, ExecControlsInput* input) {
  Napi::Value value = options.Get("controls");
  if (value.IsUndefined()) return false;
  if (!value.IsObject()) ThrowTypeError(env, "spawn: controls must be an object");
  Napi::Object object = value.As<Napi::Object>();
  ExecControls& c = input->controls;

  Napi::Value uid = object.Get("uid");
  if (!uid.IsUndefined()) {
    c.set_uid = true;
    c.uid = static_cast<uid_t>(IntegerIn(env, uid, "uid", 0, kMaxId));
  }
  Napi::Value gid = object.Get("gid");
  if (!gid.IsUndefined()) {
    c.set_gid = true;
    c.gid = static_cast<gid_t>(IntegerIn(env, gid, "gid", 0, kMaxId));
  }
  Napi::Value groups = object.Get("groups");
  if (!groups.IsUndefined()) {
    if (!groups.IsArray()) ThrowTypeError(env, "spawn: controls.groups must be an array");
    Napi::Array array = groups.As<Napi::Array>();
    // NGROUPS_MAX of the kernel (65536): a longer list can only fail.
    if (array.Length() > 65536) ThrowTypeError(env, "spawn: controls.groups is too long");
    for (uint32_t i = 0; i < array.Length(); ++i) {
      input->groups.push_back(static_cast<gid_t>(
          IntegerIn(env, array.Get(i), "groups[" + std::to_string(i) + "]", 0, kMaxId)));
    }
    c.set_groups = true;
    c.groups = input->groups.data();
    c.group_count = input->groups.size();
  }
  Napi::Value umask = object.Get("umask");
  if (!umask.IsUndefined()) c.umask = static_cast<int>(IntegerIn(env, umask, "umask", 0, 07777));
  Napi::Value limits = object.Get("rlimits");
  if (!limits.IsUndefined()) {
    ReadLimits(env, limits, input);
    c.limits = input->limits.data();
    c.limit_count = input->limits.size();
  }
  Napi::Value nice = object.Get("nice");
  if (!nice.IsUndefined()) {
    c.set_nice = true;
    c.nice = static_cast<int>(IntegerIn(env, nice, "nice", -20, 19));
  }
  Napi::Value nnp = object.Get("noNewPrivileges");
  if (!nnp.IsUndefined()) {
    if (!nnp.IsBoolean()) ThrowTypeError(env, "spawn: controls.noNewPrivileges must be a boolean");
    c.no_new_privs = nnp.As<Napi::Boolean>().Value();
  }
  Napi::Value death = object.Get("parentDeathSignal");
  if (!death.IsUndefined()) {
    c.parent_death_signal =
        static_cast<int>(IntegerIn(env, death, "parentDeathSignal", 1, SIGRTMAX));
  }
  return true;
}

}  // namespace exactspawn
