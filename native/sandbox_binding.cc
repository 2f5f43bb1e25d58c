// sandbox_binding.cc — see sandbox_binding.h.
#include "sandbox_binding.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <string>

#include "core/seccomp_filter.h"
#include "system_error.h"

namespace exactspawn {

namespace {

bool RequiredBool(Napi::Env env, Napi::Object object, const char* key) {
  Napi::Value value = object.Get(key);
  if (!value.IsBoolean())
    ThrowTypeError(env, std::string("spawn: sandbox.") + key + " must be a boolean");
  return value.As<Napi::Boolean>().Value();
}

std::vector<std::string> Paths(Napi::Env env, Napi::Object object, const char* key) {
  Napi::Value value = object.Get(key);
  if (!value.IsArray())
    ThrowTypeError(env, std::string("spawn: sandbox.") + key + " must be an array");
  Napi::Array array = value.As<Napi::Array>();
  uint32_t length = array.Length();
  if (length > 4096) ThrowTypeError(env, std::string("spawn: sandbox.") + key + " is too long");
  std::vector<std::string> paths;
  for (uint32_t i = 0; i < length; ++i) {
    Napi::Value entry = array.Get(i);
    std::string where = std::string("spawn: sandbox.") + key + "[" + std::to_string(i) + "]";
    if (!entry.IsString()) ThrowTypeError(env, where + " must be a string");
    std::string path = entry.As<Napi::String>().Utf8Value();
    if (path.empty() || path[0] != '/' || path.find('\0') != std::string::npos) {
      ThrowTypeError(env, where + " must be an absolute path without NUL");
    }
    paths.push_back(std::move(path));
  }
  return paths;
}

}  // namespace

bool ReadSandbox(Napi::Env env, Napi::Object options, SandboxInput* input) {
  Napi::Value value = options.Get("sandbox");
  if (value.IsUndefined()) return false;
  if (!value.IsObject()) ThrowTypeError(env, "spawn: sandbox must be an object");
  Napi::Object object = value.As<Napi::Object>();
  SandboxSpec& spec = input->spec;
  spec.read_all = RequiredBool(env, object, "readAll");
  spec.read = Paths(env, object, "read");
  spec.write = Paths(env, object, "write");
  spec.exec = Paths(env, object, "exec");
  spec.exec_writable = RequiredBool(env, object, "execWritable");
  spec.network = RequiredBool(env, object, "network");
  spec.view = Paths(env, object, "viewPaths");
  for (const std::string& path : spec.view) {
    if (std::find(spec.write.begin(), spec.write.end(), path) == spec.write.end()) {
      ThrowTypeError(env, "spawn: sandbox.viewPaths must name write paths only");
    }
  }
  input->landlock = RequiredBool(env, object, "landlock");
  input->seccomp = RequiredBool(env, object, "seccomp");
  input->plan.drop_capabilities = RequiredBool(env, object, "dropCapabilities");
  input->read_only_view = RequiredBool(env, object, "readOnlyView");
  input->user_namespace = RequiredBool(env, object, "userNamespace");
  return true;
}

void PrepareSandbox(Napi::Env env, SandboxInput* input) {
  if (input->landlock) {
    const SandboxSpec& spec = input->spec;
    for (const std::string& path : spec.read) input->read_paths.push_back(path.c_str());
    for (const std::string& path : spec.write) input->write_paths.push_back(path.c_str());
    for (const std::string& path : spec.exec) input->exec_paths.push_back(path.c_str());
    LandlockRules& rules = input->rules;
    rules.read_all = spec.read_all;
    rules.read = input->read_paths.data();
    rules.read_count = input->read_paths.size();
    rules.write = input->write_paths.data();
    rules.write_count = input->write_paths.size();
    rules.exec = input->exec_paths.data();
    rules.exec_count = input->exec_paths.size();
    rules.exec_writable = spec.exec_writable;
    rules.network = spec.network;
    input->plan.landlock = &rules;
  }
  FilterArch arch;
  if (input->seccomp && !native_filter_arch(&arch)) {
    throw SystemError(env, {-ENOSYS, "seccomp", "sandbox"});
  }
  if (input->read_only_view) {
    // Which paths get a mount, and "/" writable meaning no view, are decided
    // in TypeScript (src/spawn/sandbox-view.ts).
    for (const std::string& path : input->spec.view) input->view_paths.push_back(path.c_str());
    input->view = {input->view_paths.data(), input->view_paths.size(), nullptr};
    if (input->user_namespace) {
      input->uid_map = std::to_string(geteuid()) + " " + std::to_string(geteuid()) + " 1\n";
      input->gid_map = std::to_string(getegid()) + " " + std::to_string(getegid()) + " 1\n";
      input->view.user_namespace = true;
      input->view.uid_map = input->uid_map.c_str();
      input->view.gid_map = input->gid_map.c_str();
    }
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) != nullptr) {
      input->cwd = cwd;
      input->view.cwd = input->cwd.c_str();
    }
    input->plan.mount_view = &input->view;
  }
  input->plan.filter = input->seccomp
                           ? sandbox_filter(arch, input->spec.network, input->spec.exec_writable)
                           : nullptr;
}

Napi::Value SandboxSupportOf(const Napi::CallbackInfo& info) {
  return Marshal(info, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    SandboxSupport support = probe_sandbox();
    Napi::Object out = Napi::Object::New(env);
    out.Set("landlockAbi", Napi::Number::New(env, support.landlock_abi));
    out.Set("seccompFilter", Napi::Boolean::New(env, support.seccomp_filter));
    const char* view = "available";
    switch (probe_mount_view()) {
      case MountViewUnavailable::kNone:
        break;
      case MountViewUnavailable::kUserNamespace:
        view = "user-namespace";
        break;
      case MountViewUnavailable::kKernel:
        view = "kernel";
        break;
      case MountViewUnavailable::kPrivilege:
        view = "privilege";
        break;
    }
    out.Set("readOnlyView", Napi::String::New(env, view));
    return out;
  });
}

namespace {

Napi::Value SandboxFilterChecked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) {
    ThrowTypeError(env, "sandboxFilter: options must be an object");
  }
  Napi::Object options = info[0].As<Napi::Object>();
  Napi::Value arch_value = options.Get("arch");
  std::string arch_name = arch_value.IsString() ? arch_value.As<Napi::String>().Utf8Value() : "";
  if (arch_name != "x86_64" && arch_name != "aarch64") {
    ThrowTypeError(env, "sandboxFilter: arch must be \"x86_64\" or \"aarch64\"");
  }
  Napi::Value network = options.Get("network");
  Napi::Value exec_writable = options.Get("execWritable");
  if (!network.IsBoolean() || !exec_writable.IsBoolean()) {
    ThrowTypeError(env, "sandboxFilter: network and execWritable must be booleans");
  }
  const struct sock_fprog* program = sandbox_filter(
      arch_name == "x86_64" ? FilterArch::kX86_64 : FilterArch::kAarch64,
      network.As<Napi::Boolean>().Value(), exec_writable.As<Napi::Boolean>().Value());
  Napi::Array out = Napi::Array::New(env, program->len);
  for (uint32_t i = 0; i < program->len; ++i) {
    const struct sock_filter& insn = program->filter[i];
    Napi::Array row = Napi::Array::New(env, 4);
    row.Set(0u, Napi::Number::New(env, insn.code));
    row.Set(1u, Napi::Number::New(env, insn.jt));
    row.Set(2u, Napi::Number::New(env, insn.jf));
    row.Set(3u, Napi::Number::New(env, insn.k));
    out.Set(i, row);
  }
  return out;
}

}  // namespace

Napi::Value SandboxFilterOf(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return SandboxFilterChecked(info); });
}

}  // namespace exactspawn
