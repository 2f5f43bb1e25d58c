// spawn_binding.h — marshals one validated options object into
// exactspawn::spawn_process() and starts watching the child.
#pragma once

#include <napi.h>

namespace exactspawn {

// spawn({ file, argv, envp, cwd?, stdio, setsid?, setpgroup?, onExit }) → ChildHandle.
Napi::Value Spawn(const Napi::CallbackInfo& info);

}  // namespace exactspawn
