/** A Writable standing for a child's stdin in tests of stream input (stream-input.ts). */
import type { Buffer } from "node:buffer";
import { Writable } from "node:stream";

/** A stdin that takes `room` bytes before it wants a drain, and records what it got. */
export function fakeStdin(room: number): { stdin: Writable; got: Buffer[] } {
  const got: Buffer[] = [];
  const stdin = new Writable({
    highWaterMark: room,
    write(chunk: Buffer, _encoding, done) {
      got.push(chunk);
      // Drained on a later turn, as a pipe is.
      setImmediate(done);
    },
  });
  return { stdin, got };
}
