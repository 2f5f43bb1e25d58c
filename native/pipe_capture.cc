// pipe_capture.cc — reads the captured pipes of a watched child (see
// child_watch.h): each parent read end is polled with a uv_poll_t
// (uv_poll_init makes it O_NONBLOCK, so a drained pipe reads EAGAIN, never
// blocks) and read into memory, at most the watch's limit. A pipe ends at
// EOF, a read error, overflow, or when the watch ends the capture.
#include <uv.h>

#include <cerrno>
#include <new>

#include "core/pipe.h"
#include "watch_state.h"

namespace exactspawn {

namespace {

void OnReaderClose(uv_handle_t* handle) {
  Watch* w = static_cast<Reader*>(handle->data)->watch;
  w->open_handles--;
  MaybeFree(w);
}

void OnPipeReadable(uv_poll_t* poll, int status, int /*events*/) {
  Reader* r = static_cast<Reader*>(poll->data);
  Watch* w = r->watch;
  if (!r->active) return;
  char* scratch = w->state->scratch.get();
  bool ended = status < 0;
  bool overflowed = false;
  for (int i = 0; i < kReadsPerEvent && !ended; ++i) {
    long n = read_fd(r->fd, scratch, kReadChunk);
    if (n == -EAGAIN) break;
    if (n <= 0) {
      ended = true;  // EOF, or a read error: what arrived so far is the output
      break;
    }
    size_t room = w->limit - r->bytes.size();
    size_t keep = static_cast<size_t>(n) > room ? room : static_cast<size_t>(n);
    try {
      r->bytes.append(scratch, keep);
    } catch (const std::bad_alloc&) {
      ended = true;
      break;
    }
    if (keep < static_cast<size_t>(n)) {
      ended = overflowed = true;
    }
  }
  if (!ended) return;
  // Closing the read end makes further writes fail with EPIPE, as a destroyed stream would.
  StopReader(r, true);
  if (overflowed) NotifyOverflow(w, r->slot);
  MaybeDeliver(w);
}

}  // namespace

int StartReader(Watch* w, Reader* r) {
  int err = uv_poll_init(w->state->loop, &r->poll, r->fd);
  if (err != 0) return err;
  r->poll.data = r;
  r->active = true;
  w->open_handles++;
  return uv_poll_start(&r->poll, UV_READABLE, OnPipeReadable);
}

// uv_close unregisters the fd synchronously, so closing the fd right after
// cannot unregister a reused fd number.
void StopReader(Reader* r, bool close_fd_too) {
  if (r->active) {
    r->active = false;
    uv_close(reinterpret_cast<uv_handle_t*>(&r->poll), OnReaderClose);
  }
  if (close_fd_too && r->fd >= 0) {
    close_fd(r->fd);
    r->fd = -1;
  }
}

void EndCapture(Watch* w) {
  for (auto& reader : w->readers) StopReader(reader.get(), true);
}

}  // namespace exactspawn
