// memfd_binding.cc — marshalling only: sealedMemfd(name, bytes) → fd.
#include "memfd_binding.h"

#include <string>

#include "core/memfd.h"
#include "system_error.h"

namespace exactspawn {

namespace {

Napi::Value SealedMemfdChecked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 2 || !info[0].IsString() || !info[1].IsBuffer()) {
    ThrowTypeError(env, "sealedMemfd: expected (name: string, bytes: Buffer)");
  }
  std::string name = info[0].As<Napi::String>().Utf8Value();
  if (name.find('\0') != std::string::npos) ThrowTypeError(env, "sealedMemfd: name contains NUL");
  Napi::Buffer<char> bytes = info[1].As<Napi::Buffer<char>>();
  StepFailure failure;
  int fd = sealed_memfd(name.c_str(), bytes.Data(), bytes.Length(), &failure);
  if (fd < 0) throw SystemError(env, failure);
  return Napi::Number::New(env, fd);
}

}  // namespace

Napi::Value SealedMemfd(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return SealedMemfdChecked(info); });
}

}  // namespace exactspawn
