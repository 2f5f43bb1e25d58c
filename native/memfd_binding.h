// memfd_binding.h — marshals exactspawn::sealed_memfd() as
// sealedMemfd(name, bytes) → fd.
#pragma once

#include <napi.h>

namespace exactspawn {

// sealedMemfd(name: string, bytes: Buffer) → fd (close-on-exec, sealed,
// offset 0). Throws a system error (syscall "memfd_create" for every step of
// it) or a TypeError for wrong arguments.
Napi::Value SealedMemfd(const Napi::CallbackInfo& info);

}  // namespace exactspawn
