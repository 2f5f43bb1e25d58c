// pipe_binding.h — marshals exactspawn::make_pipe() as pipe() → [readFd, writeFd].
#pragma once

#include <napi.h>

namespace exactspawn {

Napi::Value Pipe(const Napi::CallbackInfo& info);

}  // namespace exactspawn
