// contain_binding.cc — see contain_binding.h.
#include "contain_binding.h"

#include <cstring>

#include "core/pid_namespace.h"
#include "system_error.h"

namespace exactspawn {

namespace {

std::string CheckedString(Napi::Env env, Napi::Value value, const std::string& where) {
  if (!value.IsString()) ThrowTypeError(env, where + " must be a string");
  std::string out = value.As<Napi::String>().Utf8Value();
  if (out.empty() || std::memchr(out.data(), '\0', out.size()) != nullptr ||
      out.find('\n') != std::string::npos) {
    ThrowTypeError(env, where + " must be non-empty, without NUL or newline");
  }
  return out;
}

// Three controllers at most (memory, pids, cpu).
constexpr uint32_t kMaxLimits = 8;

Napi::Value ProbeChecked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CgroupHost host;
  Napi::Object out = Napi::Object::New(env);
  int err = find_cgroup_host(&host);
  if (err < 0) {
    out.Set("errno", Napi::Number::New(env, err));
    out.Set("code", Napi::String::New(env, ErrnoCode(err)));
    return out;
  }
  out.Set("mount", Napi::String::New(env, host.mount));
  out.Set("own", Napi::String::New(env, host.own));
  return out;
}

Napi::Value ProbePidChecked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  PidNamespace how = PidNamespace::kNone;
  StepFailure failure;
  const int err = probe_pid_namespace(&how, &failure);
  Napi::Object out = Napi::Object::New(env);
  out.Set("works", Napi::Boolean::New(env, err == 0));
  out.Set("userNamespace", Napi::Boolean::New(env, how == PidNamespace::kPidAndUser));
  if (err < 0) {
    out.Set("errno", Napi::Number::New(env, err));
    out.Set("code", Napi::String::New(env, ErrnoCode(err)));
    out.Set("syscall",
            failure.syscall != nullptr ? Napi::String::New(env, failure.syscall) : env.Null());
    // "helper": the exec helper (the namespace's init) could not be started,
    // which says nothing of the kernel's PID namespaces.
    if (failure.step != nullptr) out.Set("step", Napi::String::New(env, failure.step));
  }
  return out;
}

}  // namespace

bool ReadContain(Napi::Env env, Napi::Object options, ContainInput* input) {
  Napi::Value value = options.Get("contain");
  if (value.IsUndefined()) return false;
  if (!value.IsObject()) ThrowTypeError(env, "spawn: contain must be an object");
  Napi::Object contain = value.As<Napi::Object>();
  Napi::Value pid_namespace = contain.Get("namespace");
  if (!pid_namespace.IsUndefined()) {
    const std::string kind = CheckedString(env, pid_namespace, "spawn: contain.namespace");
    if (kind != "pid" && kind != "pid+user") {
      ThrowTypeError(env, "spawn: contain.namespace must be \"pid\" or \"pid+user\"");
    }
    input->pid_namespace = kind == "pid" ? PidNamespace::kPid : PidNamespace::kPidAndUser;
    return true;
  }
  input->parent = CheckedString(env, contain.Get("parent"), "spawn: contain.parent");
  if (input->parent[0] != '/') ThrowTypeError(env, "spawn: contain.parent must be absolute");
  Napi::Value controllers = contain.Get("controllers");
  if (!controllers.IsArray()) ThrowTypeError(env, "spawn: contain.controllers must be an array");
  Napi::Array names = controllers.As<Napi::Array>();
  if (names.Length() > kMaxLimits) ThrowTypeError(env, "spawn: contain.controllers is too long");
  for (uint32_t i = 0; i < names.Length(); ++i) {
    std::string where = "spawn: contain.controllers[" + std::to_string(i) + "]";
    std::string name = CheckedString(env, names.Get(i), where);
    // One word of cgroup.subtree_control: no path, no separator, no sign.
    if (name.empty() || name.find_first_of("/ \t\n+-") != std::string::npos) {
      ThrowTypeError(env, where + " must name a controller");
    }
    input->controllers.push_back(name);
  }
  Napi::Value limits = contain.Get("limits");
  if (limits.IsUndefined()) return true;
  if (!limits.IsArray()) ThrowTypeError(env, "spawn: contain.limits must be an array");
  Napi::Array array = limits.As<Napi::Array>();
  if (array.Length() > kMaxLimits) ThrowTypeError(env, "spawn: contain.limits is too long");
  for (uint32_t i = 0; i < array.Length(); ++i) {
    std::string where = "spawn: contain.limits[" + std::to_string(i) + "]";
    Napi::Value entry = array.Get(i);
    if (!entry.IsArray() || entry.As<Napi::Array>().Length() != 3) {
      ThrowTypeError(env, where + " must be [controller, file, value]");
    }
    Napi::Array triple = entry.As<Napi::Array>();
    for (uint32_t k = 0; k < 3; ++k) {
      std::string text = CheckedString(env, triple.Get(k), where);
      // The controller and the file name one file of the cgroup: no path.
      if (k < 2 && text.find('/') != std::string::npos) {
        ThrowTypeError(env, where + " must name a controller and a file, not a path");
      }
      input->strings.push_back(text);
    }
  }
  return true;
}

void MakeContainment(Napi::Env env, ContainInput* input, StepCgroup* out) {
  input->limits.clear();
  for (size_t i = 0; i + 2 < input->strings.size(); i += 3) {
    CgroupLimit limit;
    limit.controller = input->strings[i].c_str();
    limit.file = input->strings[i + 1].c_str();
    limit.value = input->strings[i + 2].c_str();
    input->limits.push_back(limit);
  }
  StepFailure failure;
  std::string path;
  if (make_step_cgroup(input->parent, input->controllers, input->limits.data(),
                       input->limits.size(), out, &failure, &path) < 0) {
    throw SystemError(env, failure, &path);
  }
}

Napi::Value ProbeContainment(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return ProbeChecked(info); });
}

Napi::Value ProbePidNamespace(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return ProbePidChecked(info); });
}

}  // namespace exactspawn
