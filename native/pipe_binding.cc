// pipe_binding.cc — marshalling only: pipe() returns [readFd, writeFd], both
// close-on-exec, or throws a system error (syscall "pipe2").
#include "pipe_binding.h"

#include <climits>
#include <cmath>

#include "core/pipe.h"
#include "system_error.h"

namespace exactspawn {

namespace {

Napi::Value PipeChecked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fds[2];
  int err = make_pipe(fds);
  if (err < 0) throw SystemError(env, {err, "pipe2", "pipe"});
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(0u, Napi::Number::New(env, fds[0]));
  out.Set(1u, Napi::Number::New(env, fds[1]));
  return out;
}

Napi::Value CloseFdChecked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsNumber()) ThrowTypeError(env, "closeFd: expected an fd");
  double fd = info[0].As<Napi::Number>().DoubleValue();
  // Range first: converting NaN or an out-of-range double to int is undefined.
  if (!(fd >= 0 && fd <= INT_MAX) || fd != std::trunc(fd)) {
    ThrowTypeError(env, "closeFd: expected a non-negative integer fd");
  }
  return Napi::Number::New(env, close_fd(static_cast<int>(fd)));
}

}  // namespace

Napi::Value Pipe(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return PipeChecked(info); });
}

Napi::Value CloseFd(const Napi::CallbackInfo& info) {
  return Marshal(info, [&] { return CloseFdChecked(info); });
}

}  // namespace exactspawn
