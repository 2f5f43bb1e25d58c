// pipe_binding.h — marshals exactspawn::make_pipe() as pipe() → [readFd, writeFd]
// and close_fd() as closeFd(fd).
#pragma once

#include <napi.h>

namespace exactspawn {

Napi::Value Pipe(const Napi::CallbackInfo& info);

// closeFd(fd) → 0 or -errno (never throws for a bad fd; TypeError for a non-integer).
Napi::Value CloseFd(const Napi::CallbackInfo& info);

}  // namespace exactspawn
