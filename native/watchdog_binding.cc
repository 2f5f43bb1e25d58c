// watchdog_binding.cc — marshalling only. startWatchdog({ file: string,
// argv: string[] }) checks the types (TypeError; no NUL, file absolute, argv
// non-empty), then starts the process-wide watchdog (core/watchdog.h) unless
// it runs already, and returns its pid. The first successful call fixes the
// program for the life of the process. A failed start is thrown as a system
// error naming the call that failed (pipe2, fcntl, posix_spawn, write), step
// "cleanup" and path = file. Registration itself
// happens in spawn (option `cleanup`).
#include "watchdog_binding.h"

#include <cstring>
#include <string>
#include <vector>

#include "core/watchdog.h"
#include "system_error.h"

namespace exactspawn {

namespace {

std::string CheckedString(Napi::Env env, Napi::Value value, const std::string& where) {
  if (!value.IsString()) ThrowTypeError(env, where + " must be a string");
  std::string out = value.As<Napi::String>().Utf8Value();
  if (std::memchr(out.data(), '\0', out.size()) != nullptr) {
    ThrowTypeError(env, where + " contains a NUL byte");
  }
  return out;
}

// A watchdog's argv is a handful of strings; more is a caller's mistake.
constexpr uint32_t kMaxArgs = 64;

Napi::Value StartWatchdogChecked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsObject()) {
    ThrowTypeError(env, "startWatchdog: expected exactly one options object");
  }
  Napi::Object options = info[0].As<Napi::Object>();
  std::string file = CheckedString(env, options.Get("file"), "startWatchdog: file");
  if (file.empty() || file[0] != '/') {
    ThrowTypeError(env, "startWatchdog: file must be an absolute path");
  }
  Napi::Value argv_value = options.Get("argv");
  if (!argv_value.IsArray()) ThrowTypeError(env, "startWatchdog: argv must be an array");
  Napi::Array array = argv_value.As<Napi::Array>();
  uint32_t length = array.Length();
  if (length == 0 || length > kMaxArgs) {
    ThrowTypeError(env,
                   "startWatchdog: argv must have 1 to " + std::to_string(kMaxArgs) + " strings");
  }
  std::vector<std::string> argv;
  for (uint32_t i = 0; i < length; ++i) {
    argv.push_back(
        CheckedString(env, array.Get(i), "startWatchdog: argv[" + std::to_string(i) + "]"));
  }
  StepFailure failure;
  int pid = watchdog_start(file, argv, &failure);
  if (pid < 0) throw SystemError(env, failure, &file);
  return Napi::Number::New(env, pid);
}

}  // namespace

Napi::Value StartWatchdog(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return StartWatchdogChecked(info); });
}

}  // namespace exactspawn
