// host_loop.cc — see host_loop.h.
#include "host_loop.h"

#include <dlfcn.h>

#include <mutex>

namespace exactspawn {

namespace {

HostLoopApi api;
bool found = false;
std::once_flag resolve_once;

template <typename Fn>
bool Resolve(Fn* fn, const char* name) {
  *fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
  return *fn != nullptr;
}

void ResolveAll() {
  found = Resolve(&api.get_uv_event_loop, "napi_get_uv_event_loop") &&
          Resolve(&api.poll_init, "uv_poll_init") && Resolve(&api.poll_start, "uv_poll_start") &&
          Resolve(&api.poll_stop, "uv_poll_stop") && Resolve(&api.close, "uv_close") &&
          Resolve(&api.ref, "uv_ref") && Resolve(&api.unref, "uv_unref");
}

}  // namespace

const HostLoopApi* HostLoop() {
  std::call_once(resolve_once, ResolveAll);
  return found ? &api : nullptr;
}

}  // namespace exactspawn
