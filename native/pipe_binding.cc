// pipe_binding.cc — marshalling only: pipe() returns [readFd, writeFd], both
// close-on-exec, or throws a system error (syscall "pipe2").
#include "pipe_binding.h"

#include "core/pipe.h"
#include "system_error.h"

namespace exactspawn {

Napi::Value Pipe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fds[2];
  int err = make_pipe(fds);
  if (err < 0) throw SystemError(env, err, "pipe2");
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(0u, Napi::Number::New(env, fds[0]));
  out.Set(1u, Napi::Number::New(env, fds[1]));
  return out;
}

}  // namespace exactspawn
