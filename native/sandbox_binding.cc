// sandbox_binding.cc — see sandbox_binding.h.
#include "sandbox_binding.h"

#include <unistd.h>

#include <string>

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

SandboxInput::~SandboxInput() {
  if (ruleset_fd >= 0) close(ruleset_fd);
}

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
  input->landlock = RequiredBool(env, object, "landlock");
  input->seccomp = RequiredBool(env, object, "seccomp");
  return true;
}

void PrepareSandbox(Napi::Env env, SandboxInput* input) {
  if (input->landlock) {
    std::string failed_path;
    int abi = probe_sandbox().landlock_abi;
    int fd = build_ruleset(input->spec, abi, &failed_path);
    if (fd < 0) {
      if (failed_path.empty()) throw SystemError(env, {fd, "landlock_create_ruleset", "sandbox"});
      throw SystemError(env, {fd, "landlock_add_rule", "sandbox"}, &failed_path);
    }
    input->ruleset_fd = fd;
  }
  input->plan.ruleset_fd = input->ruleset_fd;
  input->plan.filter = input->seccomp ? network_filter() : nullptr;
  if (input->seccomp && input->plan.filter == nullptr) {
    throw SystemError(env, {-ENOSYS, "seccomp", "sandbox"});
  }
}

Napi::Value SandboxSupportOf(const Napi::CallbackInfo& info) {
  return Marshal(info, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    SandboxSupport support = probe_sandbox();
    Napi::Object out = Napi::Object::New(env);
    out.Set("landlockAbi", Napi::Number::New(env, support.landlock_abi));
    out.Set("seccompFilter", Napi::Boolean::New(env, support.seccomp_filter));
    return out;
  });
}

}  // namespace exactspawn
