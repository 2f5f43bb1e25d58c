// host_loop.h — the host's own libuv event loop, reached only when the host
// is Node (JavaScript says so: src/native.ts) and only through symbols the
// host process exports, looked up at run time (dlsym). The addon links no
// libuv symbol, so the same binary loads under Bun and Deno, which implement
// Node-API but not libuv; there the exit watch waits on a thread of its own
// (watch_events.cc).
//
// uv.h is included for the types only: libuv keeps its handle layouts stable
// across 1.x, the line every supported Node ships.
#pragma once

#include <node_api.h>
#include <uv.h>

namespace exactspawn {

struct HostLoopApi {
  napi_status (*get_uv_event_loop)(napi_env env, struct uv_loop_s** loop);
  int (*poll_init)(uv_loop_t* loop, uv_poll_t* handle, int fd);
  int (*poll_start)(uv_poll_t* handle, int events, uv_poll_cb cb);
  int (*poll_stop)(uv_poll_t* handle);
  void (*close)(uv_handle_t* handle, uv_close_cb cb);
  void (*ref)(uv_handle_t* handle);
  void (*unref)(uv_handle_t* handle);
};

// The host's loop functions, or nullptr when the process exports any of them
// not (resolved once, on the first call).
const HostLoopApi* HostLoop();

}  // namespace exactspawn
