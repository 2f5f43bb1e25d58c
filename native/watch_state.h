// watch_state.h — the state the exit watch (child_watch.cc), the pipe
// capture (pipe_capture.cc), the delivery to JavaScript (exit_delivery.cc)
// and the ChildHandle methods (child_handle.cc) share. Internal to the addon.
//
// Everything here runs on the thread of the environment that spawned the
// child; nothing is locked.
#pragma once

#include <napi.h>
#include <sys/types.h>
#include <uv.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/child_exit.h"
#include "core/child_path.h"
#include "core/pipe.h"

namespace exactspawn {

class ChildHandle;
struct EnvState;
struct Watch;

// One captured pipe: the parent's read end, polled and read by the addon.
struct Reader {
  uv_poll_t poll;
  Watch* watch = nullptr;
  int slot = 0;
  int fd = -1;          // owned while >= 0: closed at the end, or handed to JavaScript
  bool active = false;  // the poll handle is initialised and not closed
  bool taken = false;   // handed to JavaScript by takeOver()
  std::string bytes;    // at most the watch's limit
};

struct Watch {
  uv_poll_t poll;  // the pidfd
  EnvState* state = nullptr;
  pid_t pid = 0;
  int pidfd = -1;
  bool closing = false;    // the pidfd poll has been closed
  bool reaped = false;     // exit (or reap_error) is known; the pid (and pgid) may be reused
  bool delivered = false;  // the JS side is detached (exit delivered, or never will be)
  bool guarded = false;    // its group is registered with the watchdog (released before the reap)
  // Sent to the child's group when its leader is a zombie, just before the
  // reap (the zombie pins the group id, so no other process can hold it).
  int group_exit_signal = 0;
  // Once reaped, stop reading the captured pipes and deliver what was read
  // (a process the child left behind may hold them open for ever).
  bool end_capture_at_exit = false;
  int reap_error = 0;
  ChildExit exit;
  // A copy-on-write child's start-status pipe (owned), read at the reap; a
  // failed start is delivered as start_error with the step and its path.
  int start_status_fd = -1;
  int start_error = 0;
  ChildPathFailure start_failure;
  std::string start_file;
  std::string start_cwd;
  int open_handles = 0;  // uv handles whose close callback has not run yet
  size_t limit = 0;
  std::vector<std::unique_ptr<Reader>> readers;
  ChildHandle* handle = nullptr;
  napi_ref on_exit = nullptr;
  napi_ref on_overflow = nullptr;
  napi_ref handle_ref = nullptr;  // keeps the JS handle alive until the exit is delivered
  Watch* prev = nullptr;
  Watch* next = nullptr;
};

struct EnvState {
  napi_env env = nullptr;
  uv_loop_t* loop = nullptr;
  napi_ref handle_ctor = nullptr;  // deleted by FinalizeState (valgrind: 40 bytes per env)
  napi_async_cleanup_hook_handle hook = nullptr;
  bool tearing_down = false;
  bool env_gone = false;
  Watch* head = nullptr;
  size_t live = 0;
  std::unique_ptr<char[]> scratch;  // kReadChunk bytes, allocated on the first capture
};

// child_watch.cc
void MaybeFree(Watch* w);
void ClosePidfdPoll(Watch* w);
// Detaches the JS side: the handle stops signalling, the references go.
void Detach(Watch* w);

// pipe_capture.cc
// Starts polling one captured read end; 0 or a libuv error (the reader is then inactive).
int StartReader(Watch* w, Reader* r);
// Stops reading; closes the fd too when asked (else the caller now owns it).
void StopReader(Reader* r, bool close_fd_too);
// Stops every reader still active, closing its fd: its output ends here.
void EndCapture(Watch* w);

// exit_delivery.cc
// Delivers the exit once the child is reaped and no captured pipe is still read.
void MaybeDeliver(Watch* w);
// Tells JavaScript that a captured slot went over the limit.
void NotifyOverflow(Watch* w, int slot);

// child_handle.cc
Napi::Function DefineChildHandle(Napi::Env env);
// Binds a new JS handle object to its watch.
void AttachHandle(Napi::Object object, Watch* w);
// The handle object's native side stops reaching the watch.
void DetachHandle(ChildHandle* handle);

}  // namespace exactspawn
