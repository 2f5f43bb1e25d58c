/**
 * A pipe between two children, made by the kernel: `createPipe()` returns
 * both ends, held by the host; a child given the pipe as stdin (stdio slot 0)
 * gets the read end, one given it as stdout or stderr (slot 1 or 2) gets the
 * write end. The bytes go from child to child; none passes through
 * JavaScript.
 *
 * The host's copy of an end is closed as soon as the call that was given it
 * returns — the child started (and holds its own copy), the start failed, or
 * the call threw — so the children see EOF and SIGPIPE exactly as in a shell
 * pipeline, and an end can be given to one call only. `close()` closes what
 * the host still holds (a pipe one side of which is never started).
 *
 * The ends are pipe2(O_CLOEXEC) descriptors of the addon; where it is not in
 * use, a FIFO's, opened and unlinked at once (fifo-pipe.ts). Either engine
 * passes them as it passes any parent fd.
 */
import { closeSync } from "node:fs";
import { nativeBinding } from "../native.js";
import { fifoPipe } from "./fifo-pipe.js";

/** Which end a stdio slot takes: the read end for stdin, the write end for stdout/stderr. */
type End = 0 | 1;

const END_NAMES = ["read", "write"] as const;

let endFd: (pipe: KernelPipe, end: End) => number;
let releaseEnd: (pipe: KernelPipe, end: End) => void;

/** A kernel pipe between two children (see the module comment). Made by `createPipe()`. */
export class KernelPipe {
  /** [read, write]; -1 once the host no longer holds that end. */
  readonly #fds: [number, number];
  readonly #close: (fd: number) => void;

  static {
    endFd = (pipe, end) => pipe.#fds[end];
    releaseEnd = (pipe, end) => {
      const fd = pipe.#fds[end];
      if (fd < 0) return;
      pipe.#fds[end] = -1;
      pipe.#close(fd);
    };
  }

  /** @internal Use createPipe(). */
  constructor(fds: readonly [number, number], close: (fd: number) => void) {
    this.#fds = [fds[0], fds[1]];
    this.#close = close;
  }

  /** Whether the host still holds the read end (no child has been given it, and close() was not called). */
  get readHeld(): boolean {
    return this.#fds[0] >= 0;
  }

  /** Whether the host still holds the write end. */
  get writeHeld(): boolean {
    return this.#fds[1] >= 0;
  }

  /** Closes the ends the host still holds (idempotent): a child on the other end then sees EOF or EPIPE. */
  close(): void {
    releaseEnd(this, 0);
    releaseEnd(this, 1);
  }
}

/**
 * A new kernel pipe, both ends held by the host until they are given to
 * children (see the module comment). Throws a system error when the kernel
 * refuses (EMFILE, ENFILE); without the addon, FallbackUnsupportedError
 * where mkfifo(1) cannot be run.
 */
export function createPipe(): KernelPipe {
  const binding = nativeBinding();
  if (binding === null || typeof binding.pipe !== "function") {
    return new KernelPipe(fifoPipe(), (fd) => closeSync(fd));
  }
  const closeFd = binding.closeFd;
  const close = closeFd === undefined ? (fd: number) => closeSync(fd) : (fd: number) => closeFd(fd);
  return new KernelPipe(binding.pipe(), (fd) => void close(fd));
}

function endOf(slot: number): End {
  return slot === 0 ? 0 : 1;
}

/**
 * The fd a stdio slot passes for `pipe`, or a reason it cannot: slots 0-2
 * only, and only an end the host still holds.
 */
export function pipeSlotFd(pipe: KernelPipe, slot: number): number | string {
  if (slot > 2) return "may be a pipe only in slots 0-2 (stdin, stdout, stderr)";
  const end = endOf(slot);
  const fd = endFd(pipe, end);
  if (fd < 0) {
    return `is a pipe whose ${END_NAMES[end]} end was already given to a child, or closed`;
  }
  return fd;
}

/**
 * Closes the host's copy of every pipe end in `stdio` (as given to a call,
 * unvalidated): called once the call has started its child or failed. Total.
 */
export function releasePipeEnds(stdio: unknown): void {
  if (!Array.isArray(stdio)) return;
  for (let slot = 0; slot < 3 && slot < stdio.length; slot++) {
    const value: unknown = stdio[slot];
    if (value instanceof KernelPipe) releaseEnd(value, endOf(slot));
  }
}
