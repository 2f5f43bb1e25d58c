// helper_binding.cc — see helper_binding.h.
#include "helper_binding.h"

#include <string>

#include "core/helper_file.h"
#include "system_error.h"

namespace exactspawn {

namespace {

Napi::Value Status(Napi::Env env) {
  const char* path = nullptr;
  const char* reason = nullptr;
  StepFailure failure;
  const char* run = helper_run(&path, &failure, &reason);
  Napi::Object out = Napi::Object::New(env);
  std::string where = path;
  out.Set("path", Napi::String::New(env, where));
  out.Set("run", Napi::String::New(env, run != nullptr ? run : "unset"));
  if (run != nullptr && failure.err != 0) {
    out.Set("error", SystemError(env, failure, &where).Value());
    if (reason != nullptr && reason[0] != '\0') out.Set("reason", Napi::String::New(env, reason));
  }
  return out;
}

Napi::Value SetHelperPathChecked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsString()) {
    ThrowTypeError(env, "setHelperPath: expected (path: string)");
  }
  std::string path = info[0].As<Napi::String>().Utf8Value();
  if (path.empty() || path[0] != '/' || path.find('\0') != std::string::npos) {
    ThrowTypeError(env, "setHelperPath: path must be absolute, without NUL");
  }
  StepFailure failure;
  set_helper_path(path.c_str(), &failure);
  return env.Undefined();
}

}  // namespace

Napi::Value SetHelperPath(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return SetHelperPathChecked(info); });
}

Napi::Value HelperStatusOf(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return Status(info.Env()); });
}

}  // namespace exactspawn
