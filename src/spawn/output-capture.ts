/**
 * Collects one readable stream's output for the result, up to a byte limit.
 * Chunks are kept as received and joined once at the end. It may start with
 * bytes read before the stream existed (the native engine's own capture),
 * which count against the same limit.
 */
import { Buffer } from "node:buffer";
import type { Readable } from "node:stream";

export class OutputCapture {
  readonly #chunks: Buffer[] = [];
  #bytes = 0;
  #overflowed = false;

  /** Calls onOverflow once when more than maxBuffer bytes arrived (the excess is dropped). */
  constructor(
    stream: Readable | null,
    maxBuffer: number,
    onOverflow: () => void,
    initial?: Buffer,
  ) {
    if (initial !== undefined && initial.length > 0) {
      this.#chunks.push(initial);
      this.#bytes = initial.length;
    }
    if (stream === null) return;
    stream.on("data", (chunk: Buffer) => {
      if (this.#overflowed) return;
      const room = maxBuffer - this.#bytes;
      if (chunk.length > room) {
        if (room > 0) this.#chunks.push(chunk.subarray(0, room));
        this.#bytes = maxBuffer;
        this.#overflowed = true;
        // Stop reading: the stream closes now, and a writer that keeps going gets EPIPE.
        stream.destroy();
        onOverflow();
        return;
      }
      this.#chunks.push(chunk);
      this.#bytes += chunk.length;
    });
  }

  get overflowed(): boolean {
    return this.#overflowed;
  }

  value(encoding: BufferEncoding | "buffer"): string | Buffer {
    const bytes =
      this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#bytes);
    return encoding === "buffer" ? bytes : bytes.toString(encoding);
  }
}
