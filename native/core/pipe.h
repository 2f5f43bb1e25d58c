// pipe.h — a close-on-exec pipe whose ends JavaScript wraps in streams (or
// the addon reads itself, for captured output).
//
// Plain C++; returns 0 or a negative errno. Both ends carry O_CLOEXEC so no
// other child inherits them; the spawn dup2s the child's end onto its slot.
// See pipe2(2), close(2), read(2).
#pragma once

#include <cstddef>

namespace exactspawn {

// Bytes read per read(2) from a captured pipe, and reads per readable event
// (so one chatty child cannot hold a loop: poll is level-triggered and fires
// again). Shared by the event-loop capture and spawnSync's loop.
constexpr size_t kReadChunk = 64 * 1024;
constexpr int kReadsPerEvent = 16;

// fds[0] is the read end, fds[1] the write end.
int make_pipe(int fds[2]);

// close(2) for an fd JavaScript never wrapped (a child's pipe end after the
// spawn). Node's fs.closeSync would warn in worker threads about fds it did
// not open. EINTR counts as closed (Linux always releases the fd).
int close_fd(int fd);

// read(2) retried on EINTR: bytes read (0 at end of file) or -errno (-EAGAIN
// when a non-blocking pipe is empty but still has a writer).
long read_fd(int fd, char* buffer, unsigned long size);

}  // namespace exactspawn
