// pipe_capture.cc — reads the captured pipes of a watched child (see
// child_watch.h): each parent read end is made O_NONBLOCK (a drained pipe
// reads EAGAIN, never blocks), registered with the environment's event
// thread (watch_events.cc) and read into memory when it reports, at most the
// watch's limit; then re-armed. A pipe ends at EOF, a read error, overflow,
// or when the watch ends the capture.
#include <fcntl.h>

#include <cerrno>
#include <new>

#include "core/pipe.h"
#include "watch_state.h"

namespace exactspawn {

namespace {

int set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return -errno;
  return 0;
}

}  // namespace

void OnPipeReady(Reader* r) {
  Watch* w = r->watch;
  if (!r->active) return;
  char* scratch = w->state->scratch.get();
  bool ended = false;
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
  if (!ended) {
    RearmFd(w->state, r->fd, r->token);
    return;
  }
  // Closing the read end makes further writes fail with EPIPE, as a destroyed stream would.
  StopReader(r, true);
  // JavaScript hears of the overflow (and of the exit) after the pass.
  r->overflow_due = overflowed;
  QueueCallbacks(w);
}

int StartReader(Watch* w, Reader* r) {
  int err = set_nonblocking(r->fd);
  if (err == 0) err = WatchFd(w, r, r->fd, &r->token);
  if (err == 0) r->active = true;
  return err;
}

// Unregistered before the fd is closed or handed on, so a reused fd number
// is never watched by mistake.
void StopReader(Reader* r, bool close_fd_too) {
  if (r->active) {
    r->active = false;
    UnwatchFd(r->watch->state, r->fd, &r->token);
    UpdateHold(r->watch);
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
